#!/usr/bin/python3
"""Starts the tests' Python servers quickly. Standard library only.

    python_starter.py [--path DIR]... [--preload MODULE]... [--preload-package PACKAGE]...

A test process starts one of these per interpreter and set of modules, and keeps
the write end of its stdin. It imports the modules its servers need once (with
`--preload-package`, a package and every module under it: Radicale loads its
plugins and request handlers lazily), then reads one JSON request per line on
stdin and forks a child per request:

    {"script": "/path/http_sink.py", "args": [...], "directory": "/tmp/x",
     "stdout": "/tmp/x/stdout", "stderr": "/tmp/x/stderr"}

or "module": "dbusmock" instead of "script", and optionally "environment":
{"NAME": "value"} to set. The child writes its pid to DIRECTORY/pid (and, when the script ends, its exit
status to DIRECTORY/status), points
stdin at /dev/null and stdout/stderr at those files (appending), and runs the
script or module as __main__ with those arguments, as `python3 SCRIPT ARGS` or
`python3 -m MODULE ARGS` would: a few milliseconds of CPU,
where a fresh interpreter spends 0.1-0.2 s importing (aiosmtpd, Radicale).
Children are reaped by the kernel (SIGCHLD ignored) and are killed when this
process ends (PR_SET_PDEATHSIG), which it does at the end of its stdin: a
crashed test run leaves no server behind, as `--exit-on-eof` does for a server
started on its own. A module that cannot be imported is left out (its servers
then import it themselves, or fail as they would alone).
"""

import argparse
import ctypes
import importlib
import json
import os
import pkgutil
import runpy
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
libc = ctypes.CDLL(None, use_errno=True)


def preload(modules, packages):
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - its servers import it themselves
            pass
    for name in packages:
        try:
            package = importlib.import_module(name)
        except Exception:  # noqa: BLE001
            continue
        for module in pkgutil.walk_packages(package.__path__, name + "."):
            if module.name.endswith(".__main__"):
                continue
            try:
                importlib.import_module(module.name)
            except Exception:  # noqa: BLE001 - a plugin with a missing dependency
                pass


def child(request, starter):
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # Named after what it runs (ps, perf): "http_sink", "radicale_serv", "dbusmock".
    name = request.get("module") or os.path.splitext(os.path.basename(request["script"]))[0]
    libc.prctl(PR_SET_NAME, name.encode()[:15])
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
    os.environ.update(request.get("environment", {}))
    code = 0
    try:
        if "module" in request:
            sys.argv = [request["module"]] + list(request["args"])
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        else:
            sys.argv = [request["script"]] + list(request["args"])
            sys.path.insert(0, os.path.dirname(os.path.abspath(request["script"])))
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
    # The exit status, for a caller that waits for it (the kernel reaps the child).
    with open(os.path.join(request["directory"], "status.tmp"), "w") as handle:
        handle.write("%d\n" % code)
    os.rename(os.path.join(request["directory"], "status.tmp"), os.path.join(request["directory"], "status"))
    os._exit(code)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--preload", action="append", default=[])
    parser.add_argument("--preload-package", action="append", default=[])
    options = parser.parse_args()
    sys.path[:0] = options.path
    preload(options.preload, options.preload_package)
    # The test process may block signals (its own handlers read them from a
    # descriptor) and a spawned process inherits the mask: unblock them, so a
    # server ends on the SIGTERM of `stop()` instead of waiting for the SIGKILL.
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
