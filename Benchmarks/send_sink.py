#!/usr/bin/env python3
"""Loopback HTTP sink for run-send-bench.sh (the fallback when nginx is missing).

    send_sink.py LOGFILE PORTFILE [MAX_SECONDS]

Listens on 127.0.0.1 on a free port, writes that port to PORTFILE once it is
listening, and answers 200 "ok" to every request, over HTTP/1.1 with keep-alive
and TCP_NODELAY. Each request appends one tab-separated line to LOGFILE, in the
same field order as the nginx sink's access log:

    METHOD  PATH  STATUS  IDEMPOTENCY-KEY (or -)  USER-AGENT (or -)  BODY-BYTES

It stops by itself after MAX_SECONDS (default 900), or on SIGTERM/SIGINT.
Standard library only.
"""

import http.server
import os
import signal
import sys
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    log_lock = threading.Lock()
    log_file = None

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        fields = [
            self.command,
            self.path,
            "200",
            self.headers.get("Idempotency-Key") or "-",
            self.headers.get("User-Agent") or "-",
            str(len(body)),
        ]
        line = "\t".join(f.replace("\t", " ").replace("\n", " ") for f in fields) + "\n"
        with Handler.log_lock:
            Handler.log_file.write(line)
            Handler.log_file.flush()
        reply = b"ok"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply)

    do_POST = do_GET = do_PUT = do_HEAD = do_OPTIONS = _answer

    def log_message(self, format, *args):  # quiet: the log file is the record
        pass


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    log_path, port_path = sys.argv[1], sys.argv[2]
    max_seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 900.0
    Handler.log_file = open(log_path, "a", encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(max_seconds, stop)
    timer.daemon = True
    timer.start()

    tmp = port_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(tmp, port_path)
    server.serve_forever(poll_interval=0.2)
    server.server_close()


if __name__ == "__main__":
    main()
