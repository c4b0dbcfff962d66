#!/usr/bin/env bash
# `buzz list --json --all` over N contacts (default 100,000; generate_cards.py),
# two builds side by side: runs alternate between them, so a busy machine slows
# both alike. Prints the median and minimum wall and CPU (user + sys) time of
# ROUNDS runs each (default 12). Guard (issue 12, point 7): the Codable rows
# no slower than 1.2× the hand-written ones.
#
#   BUZZ_BIN=new/buzz BASE_BIN=old/buzz Benchmarks/run-list-bench.sh [N]
#   Benchmarks/run-list-bench.sh [N]      # this tree's release build alone
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG=run-list-bench
# shellcheck source=lib.sh
. "$HERE/lib.sh"
N=${1:-100000}
ROUNDS=${ROUNDS:-12}
build_buzz "" -c release
make_tmproot buzz-list-bench
isolate_env
mkdir -p "$HOME"
python3 "$HERE/generate_cards.py" "$N" "$TMPROOT/cards.vcf" "$TMPROOT/cards.rem" >&2
"$BUZZ" import "$TMPROOT/cards.vcf" >/dev/null 2>&1
python3 - "$ROUNDS" "$BUZZ" ${BASE_BIN:+"$BASE_BIN"} <<'PY'
import resource, statistics, subprocess, sys, time
rounds, binaries = int(sys.argv[1]), sys.argv[2:]
args = ["--now", "2027-03-01", "list", "--json", "--all"]
results = {binary: [] for binary in binaries}
for round in range(rounds):
    for binary in binaries if round % 2 == 0 else binaries[::-1]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([binary] + args, stdout=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        results[binary].append((wall, cpu))
for binary, runs in results.items():
    wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
    print("%s: wall median %.3f s, min %.3f s; cpu median %.3f s, min %.3f s"
          % (binary, statistics.median(wall), min(wall), statistics.median(cpu), min(cpu)))
PY
