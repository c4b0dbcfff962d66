#!/usr/bin/env python3
"""Apprise side of run-deliver-bench.sh: N birthday notifications, one process.

    deliver_apprise.py URL N

Uses the Apprise library (not its CLI): one Apprise object with URL added once,
then N sequential notify() calls, each with the title and body buzz renders for
a day-of reminder ("It's Person I's birthday today" ...). Only the loop is
timed (time.perf_counter), not the import of apprise or the setup.

Prints one line on stdout:  N OK SECONDS  (OK = notify() calls that returned
True). Exits 1 if any call returned False.
"""

import sys
import time

import apprise


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: deliver_apprise.py URL N")
    url, n = sys.argv[1], int(sys.argv[2])
    apobj = apprise.Apprise()
    if not apobj.add(url):
        sys.exit("apprise rejected the URL %s" % url)
    ok = 0
    start = time.perf_counter()
    for i in range(n):
        title = "It's Person %d's birthday today" % i
        body = ("Person turns 37 today, March 15, 2027.\n"
                "A quick call or a few kind words will make their day.")
        if apobj.notify(body=body, title=title):
            ok += 1
    seconds = time.perf_counter() - start
    print("%d %d %.6f" % (n, ok, seconds))
    sys.exit(0 if ok == n else 1)


if __name__ == "__main__":
    main()
