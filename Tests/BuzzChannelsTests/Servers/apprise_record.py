#!/usr/bin/python3
"""Runs Apprise as a library with its HTTP calls recorded, never sent.

    apprise_record.py URL TITLE BODY

For the services whose host Apprise fixes (discord, slack, tgram, pover) the
tests cannot point Apprise at the HTTP sink, so they read what Apprise would
have sent: `requests` is patched, every call answers 200, and the calls are
printed on stdout as one JSON array of
{"method", "url", "headers", "data", "auth"} (data: the body text, or the
form fields as an object).
"""

import json
import sys
from unittest import mock

import apprise


class Answer:
    status_code = 200
    # Slack's incoming webhooks answer "ok" (Apprise 1.2 compares it as text); the others JSON.
    content = b'{"ok": true, "status": 1, "result": {"id": 1}}'
    headers = {}

    def __init__(self, content=None):
        if content is not None:
            self.content = content
        self.text = self.content if isinstance(self.content, str) else self.content.decode()

    def json(self):
        return json.loads(self.content)


def main(argv):
    url, title, body = argv
    calls = []

    def recorder(method):
        def call(target, data=None, headers=None, auth=None, **_):
            if isinstance(data, bytes):
                data = data.decode("utf-8")
            calls.append({"method": method, "url": target, "headers": dict(headers or {}),
                          "data": data, "auth": list(auth) if auth else None})
            return Answer("ok" if "hooks.slack.com" in target else None)
        return call

    with mock.patch("requests.post", recorder("POST")), mock.patch("requests.get", recorder("GET")):
        notifier = apprise.Apprise()
        if not notifier.add(url):
            print("apprise does not read %s" % url.split("://")[0], file=sys.stderr)
            return 2
        if not notifier.notify(title=title, body=body):
            print("apprise reported a failure", file=sys.stderr)
            return 1
    print(json.dumps(calls))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
