#!/usr/bin/env bash
# `buzz status --waybar` with N contacts (default 10,000; generate_cards.py),
# against `buzz list --json` on the same data, on the static release build:
# median, min and 90th percentile of ROUNDS runs each (default 30), wall time
# of the whole process as a bar would start it. Target (issue 13): ≤ 15 ms.
#
#   Benchmarks/run-status-bench.sh [N]
#   BUZZ_BIN=path/to/buzz Benchmarks/run-status-bench.sh   # a prebuilt binary
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG=run-status-bench
# shellcheck source=lib.sh
. "$HERE/lib.sh"
N=${1:-10000}
ROUNDS=${ROUNDS:-30}
build_buzz " (static, -no-pie)" -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld
make_tmproot buzz-status-bench
isolate_env
mkdir -p "$HOME"
python3 "$HERE/generate_cards.py" "$N" "$TMPROOT/cards.vcf" "$TMPROOT/cards.rem"
"$BUZZ" import "$TMPROOT/cards.vcf" >/dev/null
python3 - "$BUZZ" "$ROUNDS" <<'PY'
import statistics, subprocess, sys, time
buzz, rounds = sys.argv[1], int(sys.argv[2])
for args in (["status", "--waybar"], ["status", "--json"], ["list", "--json"]):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run([buzz] + args, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print("buzz %-16s median %6.1f ms  min %6.1f  p90 %6.1f"
          % (" ".join(args), statistics.median(times), times[0], times[int(rounds * 0.9) - 1]))
PY
