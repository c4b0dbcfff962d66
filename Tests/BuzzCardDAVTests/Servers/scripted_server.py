"""A scripted HTTP server for the CardDAV client's edge cases (redirects,
hosts outside the domain, bad XML, 5xx), where a real Radicale cannot be
made to misbehave. Standard library only.

Usage: scripted_server.py SCRIPT.json [--exit-on-eof]
SCRIPT.json maps a path to {"status": 207, "headers": {...}, "body": "..."};
"{port}" in a header or body becomes the server's port. Unknown paths: 404.
A key "PATH#TEXT" answers only requests to PATH whose body holds TEXT (the
REPORT's kind, say), before the plain PATH key; a key "METHOD PATH" ("PUT
/book/a.vcf") answers only that method, before both.
An entry may also say:
  "endless": true   -- a 207 whose body never ends (no Content-Length; it
                       streams until the client hangs up);
  "cards": {HREF: VCARD}  -- an addressbook-multiget answer built for the
                       hrefs the request asks for (those not in the table: 404).
Prints "READY <port>". GET /__requests lists [{"method", "path", "auth", "hrefs",
"body"}] (the multiget's hrefs; the request body as UTF-8 text, for checking a
PUT byte for byte). PUT /__script replaces the script with the JSON body.
"""

import json
import os
import re
import sys
import threading
from xml.sax.saxutils import escape
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
        if self.path == "/__script" and self.command == "PUT":
            SCRIPT.clear()
            SCRIPT.update(json.loads(request_body))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/__requests":
            body = json.dumps(REQUESTS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        asked = re.findall(r"<D:href>(.*?)</D:href>", request_body)
        REQUESTS.append({"method": self.command, "path": self.path, "auth": "Authorization" in self.headers,
                         "hrefs": asked, "body": request_body})
        port = str(self.server.server_address[1])
        entry = SCRIPT.get(self.command + " " + self.path) or next(
            (value for key, value in SCRIPT.items()
             if "#" in key and key.split("#", 1)[0] == self.path and key.split("#", 1)[1] in request_body),
            SCRIPT.get(self.path, {"status": 404, "body": ""}))
        if entry.get("endless"):
            self.send_response(207)
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = b"<d:response><d:href>/x</d:href></d:response>" * 20000
            try:
                self.wfile.write(b'<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">')
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        if "cards" in entry:
            parts = []
            for href in asked:
                href = href.replace("&amp;", "&")
                card = entry["cards"].get(href)
                if card is None:
                    parts.append("<d:response><d:href>%s</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>"
                                 % escape(href))
                else:
                    parts.append("<d:response><d:href>%s</d:href><d:propstat><d:prop><d:getetag>\"%d\"</d:getetag>"
                                 "<c:address-data>%s</c:address-data></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
                                 "</d:propstat></d:response>" % (escape(href), len(card), escape(card)))
            entry = dict(entry, status=entry.get("status", 207), body='<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" '
                         'xmlns:c="urn:ietf:params:xml:ns:carddav">' + "".join(parts) + "</d:multistatus>")
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
