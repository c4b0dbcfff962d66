#!/usr/bin/python3
"""SMTP sink for BirthdayBuzz's channel tests (docs/design/testing.md).

Run with Debian's /usr/bin/python3 (python3-aiosmtpd 1.4.3, Python 3.11).

    smtp_sink.py --log FILE [--port 0] [--host 127.0.0.1]
                 [--starttls CERT KEY] [--auth USER:PASS]
                 [--reject-rcpt ADDRESS]... [--defer-rcpt ADDRESS]
                 [--fail CODE] [--fail-times N]
                 [--exit-on-eof]

Prints ``READY <port>`` on stdout once listening. Every accepted message is
appended to FILE as one JSON line:

    {"mail_from": "...", "rcpt_tos": ["..."], "data": "<raw message>",
     "tls": true|false, "auth": "user"|null, "peer": <client port>}

``data`` is the raw DATA content (after un-dot-stuffing, CRLF line endings
kept) decoded as UTF-8, or as Latin-1 when it is not valid UTF-8.

Modes:
  --starttls CERT KEY  advertise STARTTLS and require it before MAIL/RCPT/DATA
                       (530 otherwise).
  --auth USER:PASS     offer AUTH PLAIN and LOGIN and require it before MAIL
                       (530). Allowed without TLS when --starttls is absent.
  --reject-rcpt ADDR   answer "550 5.1.1 ..." to RCPT TO for ADDR (repeatable,
                       case-insensitive).
  --defer-rcpt ADDR    answer "450 4.2.0 ..." to the first RCPT TO for ADDR
                       (a mailbox busy for now), accept it later.
  --fail CODE          answer CODE (e.g. 451 or 554) at the end of DATA instead
                       of 250; the message is logged with "refused": CODE.
  --fail-times N       with --fail: only the first N messages fail, later ones
                       are accepted (default: all fail).

  --exit-on-eof        exit when stdin reaches end of file: the test keeps a
                       pipe open, so the sink dies with the test process even
                       if that crashes.

The process exits on SIGTERM or SIGINT.
"""

import argparse
import asyncio
import json
import signal
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

from sink_common import watch_stdin


def parse_args(argv):
    parser = argparse.ArgumentParser(description="SMTP sink for tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", required=True, help="JSON-lines file of received messages")
    parser.add_argument("--starttls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--auth", metavar="USER:PASS")
    parser.add_argument("--reject-rcpt", action="append", default=[], metavar="ADDRESS")
    parser.add_argument("--defer-rcpt", metavar="ADDRESS")
    parser.add_argument("--fail", type=int, metavar="CODE")
    parser.add_argument("--fail-times", type=int, default=None, metavar="N")
    parser.add_argument("--exit-on-eof", action="store_true")
    return parser.parse_args(argv)


def decode(raw):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class Handler:
    def __init__(self, args, tls_enabled):
        self.log_path = args.log
        self.reject = {address.lower() for address in args.reject_rcpt}
        self.defer = args.defer_rcpt.lower() if args.defer_rcpt else None
        self.fail = args.fail
        self.fail_left = args.fail_times
        self.tls_enabled = tls_enabled

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.reject:
            return "550 5.1.1 <%s>: Recipient address rejected" % address
        if self.defer is not None and address.lower() == self.defer:
            self.defer = None
            return "450 4.2.0 <%s>: Mailbox busy, try later" % address
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.fail is not None and (self.fail_left is None or self.fail_left > 0):
            if self.fail_left is not None:
                self.fail_left -= 1
            # Logged with the code it got, so a test can compare a refused attempt with its retry.
            self.log(server, session, envelope, refused=self.fail)
            if 400 <= self.fail < 500:
                return "%d 4.3.0 Temporary failure (test sink)" % self.fail
            return "%d 5.3.0 Permanent failure (test sink)" % self.fail
        self.log(server, session, envelope)
        return "250 2.0.0 OK: queued"

    def log(self, server, session, envelope, refused=None):
        raw = envelope.original_content
        if raw is None:
            raw = envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        auth = session.auth_data if session.authenticated else None
        if isinstance(auth, bytes):
            auth = decode(auth)
        peer = session.peer[1] if session.peer else None
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "data": decode(raw or b""),
            "tls": session.ssl is not None,
            "auth": auth,
            "peer": peer,
            "ehlo": session.host_name,
        }
        if refused is not None:
            record["refused"] = refused
        line = json.dumps(record) + "\n"
        # One write per message, so a reader never sees half a line.
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(line)
            log.flush()


def make_authenticator(user, password):
    def authenticate(server, session, envelope, mechanism, auth_data):
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        login = decode(auth_data.login)
        if login == user and decode(auth_data.password) == password:
            return AuthResult(success=True, auth_data=login)
        return AuthResult(success=False, handled=False)

    return authenticate


async def main(argv):
    args = parse_args(argv)
    # Create (or truncate) the log so readers can open it at once.
    open(args.log, "w").close()

    tls_context = None
    if args.starttls:
        tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls_context.check_hostname = False
        tls_context.verify_mode = ssl.CERT_NONE
        tls_context.load_cert_chain(args.starttls[0], args.starttls[1])

    smtp_kwargs = dict(
        hostname="buzz-smtp-sink",  # avoid socket.getfqdn(): it may wait on DNS
        tls_context=tls_context,
        require_starttls=tls_context is not None,
        decode_data=False,
        enable_SMTPUTF8=True,
        timeout=60,
    )
    if args.auth:
        user, sep, password = args.auth.partition(":")
        if not sep:
            print("--auth needs USER:PASS", file=sys.stderr, flush=True)
            return 2
        smtp_kwargs.update(
            authenticator=make_authenticator(user, password),
            auth_required=True,
            auth_require_tls=tls_context is not None,
        )

    handler = Handler(args, tls_context is not None)
    loop = asyncio.get_running_loop()

    def factory():
        return SMTP(handler, loop=loop, **smtp_kwargs)

    server = await loop.create_server(factory, host=args.host, port=args.port)
    port = server.sockets[0].getsockname()[1]

    stop = loop.create_future()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: stop.done() or stop.set_result(None))

    if args.exit_on_eof:
        watch_stdin()

    print("READY %d" % port, flush=True)
    try:
        await stop
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    import logging
    import warnings
    # aiosmtpd logs a deprecation notice of its own on every AUTH.
    logging.getLogger("mail.log").setLevel(logging.ERROR)
    # auth_required without TLS is what --auth asks for in plain mode.
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    sys.exit(asyncio.run(main(sys.argv[1:])))
