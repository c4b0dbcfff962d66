"""A real Radicale (Debian's python3-radicale or PyPI's radicale) for BirthdayBuzz's
CardDAV tests and benchmark, on 127.0.0.1 with htpasswd auth.

Usage: radicale_server.py --storage DIR --users "alice:secret,bob:pw"
                          [--tls CERT KEY] [--port N] [--exit-on-eof]

Prints "READY <port>" once it listens. Radicale itself answers every request,
through a thin WSGI wrapper that records what it was asked so that a test can
count requests:

  GET    /__requests   [{"method", "path", "depth", "report", "status"}, …]
  DELETE /__requests   forgets them
  PUT    /__fail       {"status": 500, "report": "addressbook-multiget"}: answers
                       that status instead of Radicale, to every request (or to
                       REPORTs of that kind only) until DELETE /__fail

("report" is the root element of a REPORT body: sync-collection,
addressbook-multiget…). The wrapper answers nothing else itself, unless told to fail.
"""

import argparse
import io
import json
import os
import re
import socketserver
import ssl
import sys
import threading
import urllib.parse
import wsgiref.handlers
import wsgiref.simple_server

import radicale
import radicale.config

REPORT_ROOT = re.compile(rb"<(?:[A-Za-z0-9_-]+:)?([A-Za-z-]+)[\s>/]")


class Recorder:
    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.requests = []
        self.fail = None

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        method = environ["REQUEST_METHOD"]
        if path == "/__fail":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            data = environ["wsgi.input"].read(length) if length > 0 else b""
            with self.lock:
                self.fail = json.loads(data) if method == "PUT" else None
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
            return [b"{}"]
        if path == "/__requests":
            if method == "DELETE":
                with self.lock:
                    self.requests.clear()
                body = b"[]"
            else:
                with self.lock:
                    body = json.dumps(self.requests).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        report = None
        # Read the whole body here: a reply Radicale gives without reading it
        # (a redirect) must not leave it on the kept-alive connection.
        length = int(environ.get("CONTENT_LENGTH") or 0)
        data = environ["wsgi.input"].read(length) if length > 0 else b""
        environ["wsgi.input"] = io.BytesIO(data)
        if method == "REPORT":
            # The first element after the XML declaration names the report.
            for match in REPORT_ROOT.finditer(data):
                if match.group(1) not in (b"xml",) and not data[match.start() + 1:match.start() + 2] in (b"?", b"!"):
                    report = match.group(1).decode()
                    break
        entry = {"method": method, "path": path, "depth": environ.get("HTTP_DEPTH"), "report": report,
                 "status": None}

        def recording_start_response(status, headers, exc_info=None):
            entry["status"] = int(status.split(" ", 1)[0])
            return start_response(status, headers, exc_info)

        with self.lock:
            self.requests.append(entry)
            fail = self.fail
        if fail is not None and fail.get("report") in (None, report):
            entry["status"] = fail["status"]
            body = b"injected failure"
            start_response("%d Injected" % fail["status"], [("Content-Type", "text/plain"),
                                                            ("Content-Length", str(len(body)))])
            return [body]
        return self.app(environ, recording_start_response)


class Handler(wsgiref.simple_server.WSGIRequestHandler):
    # Keep-alive needs HTTP/1.1; without TCP_NODELAY every reply on a kept-alive
    # connection stalls ~40 ms (docs/design/decisions.md).
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def get_environ(self):
        env = super().get_environ()
        # As Radicale's own server does: wsgiref decodes the path as Latin-1 only.
        env["PATH_INFO"] = urllib.parse.unquote(self.path.split("?", 1)[0])
        if isinstance(self.connection, ssl.SSLSocket):
            env["HTTPS"] = "on"
        return env

    def handle(self):
        # wsgiref handles one request per connection; loop for keep-alive.
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection:
            self.handle_one_request()

    def handle_one_request(self):
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline:
            self.close_connection = True
            return
        if not self.parse_request():
            return
        handler = KeepAliveServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ(),
                                         multithread=True)
        handler.request_handler = self
        handler.run(self.server.get_app())
        if self.headers.get("Connection", "").lower() == "close":
            self.close_connection = True


class KeepAliveServerHandler(wsgiref.simple_server.ServerHandler):
    http_version = "1.1"

    def cleanup_headers(self):
        super().cleanup_headers()
        # Without a length the client cannot tell where the body ends: close.
        if "Content-Length" not in self.headers:
            self.request_handler.close_connection = True

    def close(self):
        try:
            self.request_handler.log_request(self.status.split(" ", 1)[0], self.bytes_sent)
        finally:
            wsgiref.handlers.SimpleHandler.close(self)


class Server(socketserver.ThreadingMixIn, wsgiref.simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--storage", required=True)
    parser.add_argument("--users", required=True, help="user:password,…")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--exit-on-eof", action="store_true")
    args = parser.parse_args()

    os.makedirs(args.storage, exist_ok=True)
    htpasswd = os.path.join(args.storage, "htpasswd")
    with open(htpasswd, "w") as f:
        for pair in args.users.split(","):
            f.write(pair + "\n")
    config_path = os.path.join(args.storage, "config")
    with open(config_path, "w") as f:
        f.write("[auth]\ntype = htpasswd\nhtpasswd_filename = %s\nhtpasswd_encryption = plain\n" % htpasswd)
        f.write("[rights]\ntype = owner_only\n")
        f.write("[storage]\nfilesystem_folder = %s\n" % os.path.join(args.storage, "collections"))
        f.write("[web]\ntype = none\n")
        f.write("[logging]\nlevel = warning\n")
    configuration = radicale.config.load([(config_path, False)])
    # No fsync per stored item (a private option, as Radicale's own tests set it):
    # a throwaway store, and a first read of 10,000 cards would otherwise wait
    # for 10,000 fsyncs of Radicale's item cache.
    configuration.update({"storage": {"_filesystem_fsync": "False"}}, "buzz tests", privileged=True)
    app = Recorder(radicale.Application(configuration))

    server = Server(("127.0.0.1", args.port), Handler)
    server.set_app(app)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    if args.exit_on_eof:
        def watch():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    print("READY %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
