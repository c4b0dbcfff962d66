"""A scripted HTTP server for the CardDAV client's edge cases (redirects,
hosts outside the domain, bad XML, 5xx), where a real Radicale cannot be
made to misbehave. Standard library only.

Usage: scripted_server.py SCRIPT.json [--exit-on-eof]
SCRIPT.json maps a path to {"status": 207, "headers": {...}, "body": "..."};
"{port}" in a header or body becomes the server's port. Unknown paths: 404.
A key "PATH#TEXT" answers only requests to PATH whose body holds TEXT (the
REPORT's kind, say), before the plain PATH key; a key "METHOD PATH" ("PUT
/book/a.vcf") answers only that method, before both.
Prints "READY <port>". GET /__requests lists [{"method", "path", "auth",
"body"}] (the request body as UTF-8 text, for checking a PUT byte for byte).
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
REQUESTS = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        request_body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        if self.path == "/__requests":
            body = json.dumps(REQUESTS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        REQUESTS.append({"method": self.command, "path": self.path, "auth": "Authorization" in self.headers,
                         "body": request_body})
        port = str(self.server.server_address[1])
        entry = SCRIPT.get(self.command + " " + self.path) or next(
            (value for key, value in SCRIPT.items()
             if "#" in key and key.split("#", 1)[0] == self.path and key.split("#", 1)[1] in request_body),
            SCRIPT.get(self.path, {"status": 404, "body": ""}))
        body = entry.get("body", "").replace("{port}", port).encode()
        self.send_response(entry.get("status", 200))
        for name, value in entry.get("headers", {}).items():
            self.send_header(name, value.replace("{port}", port))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_PROPFIND = do_REPORT = do_DELETE = answer


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if "--exit-on-eof" in sys.argv:
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
