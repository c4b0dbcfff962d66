#!/usr/bin/python3
"""HTTP sink for BirthdayBuzz's channel tests (docs/design/testing.md). Standard library only.

    http_sink.py [--log FILE] [--host 127.0.0.1] [--port 0] [--status CODE]
                 [--tls CERT KEY] [--exit-on-eof]

Prints ``READY <port>`` on stdout once listening. HTTP/1.1 with keep-alive,
one thread per connection, Nagle off (docs/design/decisions.md: otherwise every keep-alive
request stalls ~40 ms).

Every request except the control endpoints is recorded, in arrival order, as
one JSON object (and appended to FILE as one JSON line when --log is given):

    {"seq": 0, "method": "POST", "path": "/hook?x=1",
     "headers": [["Host", "127.0.0.1:8080"], ...],   # in order, repeats kept
     "body_base64": "...",                            # always, exact bytes
     "body": "..." | null,                            # UTF-8 text, or null
     "connection": 51234,                             # client's remote port
     "status": 200}                                   # status answered

Each recorded request is answered by the next scripted response, then by the
default response (``--status``, 200 unless given). A response is a JSON object:

    {"status": 429,                         # default 200
     "headers": {"Retry-After": "7"},       # extra headers
     "body": "text" | "body_base64": "...", # default empty
     "echo_headers": true | ["Name", ...],  # append the request's headers (all, or
                                            # those named) to the body, "Name: value"
                                            # lines, as a careless error page does
     "echo_path": true,                     # append " Cannot METHOD /path?query" (before
                                            # the headers), as a framework's 404 page does
     "hang": 5,                             # sleep 5 s before answering
     "hold": true,                          # answer only after POST /__release
                                            # (or 60 s), after any hang
     "close": true,                         # close the connection afterwards
     "drop": true}                          # close without any answer

Control endpoints (not recorded, do not consume the script):

    POST /__control    {"responses": [...], "default": {...}}
                       replaces the script (both keys optional; "default"
                       null or absent keeps the current default); answers
                       200 {"ok": true}. Add "clear": true to empty the log.
    GET  /__requests   the recorded requests as a JSON array.
    DELETE /__requests empties the recorded requests.
    POST /__release    answers every request held ("hold") now and from now on.
    GET  /__tls        {"port": N}: with --tls, a second listener on port N
                       speaks HTTPS (CERT and KEY in PEM) and shares the
                       script and the record; null without --tls.
"""

import argparse
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sink_common import watch_stdin


class State:
    def __init__(self, log_path, default_status):
        self.lock = threading.Lock()
        self.log_path = log_path
        self.responses = []
        self.default = {"status": default_status}
        self.records = []
        self.released = threading.Event()
        if log_path:
            open(log_path, "w").close()

    def take_response(self):
        with self.lock:
            if self.responses:
                return self.responses.pop(0)
            return dict(self.default)

    def record(self, entry):
        with self.lock:
            entry["seq"] = len(self.records)
            self.records.append(entry)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as log:
                    log.write(json.dumps(entry) + "\n")

    def script(self, control):
        with self.lock:
            if "responses" in control:
                self.responses = list(control["responses"] or [])
            if control.get("default") is not None:
                self.default = dict(control["default"])
            if control.get("clear"):
                self.records = []
                if self.log_path:
                    open(self.log_path, "w").close()

    def snapshot(self):
        with self.lock:
            return list(self.records)

    def clear(self):
        with self.lock:
            self.records = []
            if self.log_path:
                open(self.log_path, "w").close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "BuzzHTTPSink/1"
    state = None  # set in main()

    def version_string(self):
        return self.server_version

    # Quiet: the test reads stderr only when the sink fails to start.
    def log_message(self, format, *args):
        pass

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline()
                if not size_line:
                    break
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # Trailers, up to the empty line.
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # CRLF after the chunk
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send(self, status, body=b"", headers=None, content_type=None, close=False):
        self.send_response(status)
        names = {name.lower() for name in (headers or {})}
        if content_type and "content-type" not in names:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        if "content-length" not in names:
            self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def handle_any(self):
        body = self.read_body()
        path_only = self.path.split("?", 1)[0]
        if path_only == "/__control" and self.command == "POST":
            try:
                control = json.loads(body or b"{}")
            except ValueError as error:
                self.send(400, ("bad control JSON: %s" % error).encode(), content_type="text/plain")
                return
            self.state.script(control)
            self.send(200, b'{"ok": true}', content_type="application/json")
            return
        if path_only == "/__requests" and self.command == "GET":
            payload = json.dumps(self.state.snapshot()).encode()
            self.send(200, payload, content_type="application/json")
            return
        if path_only == "/__tls" and self.command == "GET":
            payload = json.dumps({"port": Handler.tls_port}).encode()
            self.send(200, payload, content_type="application/json")
            return
        if path_only == "/__release" and self.command == "POST":
            self.state.released.set()
            self.send(200, b'{"ok": true}', content_type="application/json")
            return
        if path_only == "/__requests" and self.command == "DELETE":
            self.state.clear()
            self.send(200, b'{"ok": true}', content_type="application/json")
            return

        response = self.state.take_response()
        status = int(response.get("status", 200))
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        self.state.record({
            "method": self.command,
            "path": self.path,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body_base64": base64.b64encode(body).decode("ascii"),
            "body": text,
            "connection": self.client_address[1],
            "status": None if response.get("drop") else status,
        })

        hang = float(response.get("hang", 0) or 0)
        if hang > 0:
            time.sleep(hang)
        if response.get("hold"):
            self.state.released.wait(60)
        if response.get("drop"):
            self.close_connection = True
            return
        if "body_base64" in response:
            payload = base64.b64decode(response["body_base64"])
        else:
            payload = str(response.get("body", "")).encode("utf-8")
        if response.get("echo_path"):
            payload += (" Cannot %s %s" % (self.command, self.path)).encode("utf-8")
        echo = response.get("echo_headers")
        if echo:
            wanted = None if echo is True else {name.lower() for name in echo}
            payload += "".join(" %s: %s" % (name, value) for name, value in self.headers.items()
                               if wanted is None or name.lower() in wanted).encode("utf-8")
        try:
            self.send(status, payload, headers=response.get("headers"),
                      close=bool(response.get("close")))
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (e.g. its timeout fired during a hang).
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that hangs up mid-request is normal in these tests.
        error = sys.exc_info()[1]
        if isinstance(error, (BrokenPipeError, ConnectionResetError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main(argv):
    parser = argparse.ArgumentParser(description="HTTP sink for tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append each request as a JSON line to this file")
    parser.add_argument("--status", type=int, default=200, help="default response status")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--exit-on-eof", action="store_true",
                        help="exit when stdin reaches end of file")
    args = parser.parse_args(argv)

    Handler.state = State(args.log, args.status)
    Handler.tls_port = None
    server = Server((args.host, args.port), Handler)
    if args.tls:
        import ssl
        import threading
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        secure = Server((args.host, 0), Handler)
        secure.socket = context.wrap_socket(secure.socket, server_side=True)
        Handler.tls_port = secure.server_address[1]
        threading.Thread(target=secure.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
    if args.exit_on_eof:
        watch_stdin()
    print("READY %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
