#!/usr/bin/python3
"""Starts the test sinks (http_sink.py, smtp_sink.py) quickly. Standard library only.

    sink_starter.py

A test process starts one of these and keeps the write end of its stdin. It
imports what the sinks import (http.server, asyncio, ssl, aiosmtpd: about
0.1-0.2 s of CPU for each sink started from scratch) once, then reads one JSON
request per line on stdin and forks a child per request:

    {"script": "/path/http_sink.py", "args": [...], "directory": "/tmp/x",
     "stdout": "/tmp/x/stdout", "stderr": "/tmp/x/stderr"}

The child writes its pid to DIRECTORY/pid, points stdin at /dev/null and
stdout/stderr at those files (appending), and runs the script as __main__ with
those arguments, as `python3 SCRIPT ARGS` would. Children are reaped by the
kernel (SIGCHLD ignored) and are killed when this process ends
(PR_SET_PDEATHSIG), which it does at the end of its stdin: a crashed test run
leaves no server behind, as `--exit-on-eof` does for a sink started on its own.
"""

import ctypes
import json
import os
import runpy
import signal
import sys

# What the sinks import, so that a forked child finds it loaded.
import argparse  # noqa: F401
import asyncio  # noqa: F401
import base64  # noqa: F401
import http.server  # noqa: F401
import logging  # noqa: F401
import ssl  # noqa: F401
import threading  # noqa: F401
import time  # noqa: F401
import warnings  # noqa: F401

try:
    import aiosmtpd.smtp  # noqa: F401
except ImportError:  # the HTTP sink alone still starts
    pass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sink_common  # noqa: E402,F401

PR_SET_PDEATHSIG = 1
libc = ctypes.CDLL(None, use_errno=True)


def child(request, starter):
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != starter:  # the starter ended before the prctl
        os._exit(1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.chdir(request["directory"])
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (null, out, err):
        os.close(fd)
    with open(os.path.join(request["directory"], "pid"), "w") as handle:
        handle.write("%d\n" % os.getpid())
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    sys.argv = [request["script"]] + list(request["args"])
    code = 0
    try:
        runpy.run_path(request["script"], run_name="__main__")
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if not isinstance(exit.code, (int, type(None))):
            print(exit.code, file=sys.stderr)
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    # The test process may block signals (its own handlers read them from a
    # descriptor) and a spawned process inherits the mask: unblock them, so a
    # sink ends on the SIGTERM of `stop()` instead of waiting for the SIGKILL.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    starter = os.getpid()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError as error:
            print("bad request %r: %s" % (line, error), file=sys.stderr, flush=True)
            continue
        if os.fork() == 0:
            child(request, starter)
    return 0


if __name__ == "__main__":
    sys.exit(main())
