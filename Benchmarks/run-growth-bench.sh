#!/usr/bin/env bash
# How import, upcoming and status grow with the address book: 10k, 100k and 1M
# generated contacts (generate_cards.py, BENCH_ANNIVERSARIES=0.3 and
# BENCH_DATES=0.1 by default), one run of the static release build, beside
# `remind -n` on the same birthdays. Prints each step's wall time and peak RSS,
# and the ratios the targets are written in:
#   import:   1M within 11x of 100k, <= 300 MB at 1M  (linear, bounded memory)
#   upcoming: 1M within 2x of 100k                     (bounded by its window)
#   upcoming >= 4x faster than remind -n at 100k; status --waybar <= 10 ms at 100k
# Run by hand (never part of swift test):
#   bash Benchmarks/run-growth-bench.sh          # BENCH_SIZES="10000 100000 1000000"
#   BUZZ_BIN=path/to/buzz bash Benchmarks/run-growth-bench.sh
# The 1M input (~290 MB) is generated once into Benchmarks/out/ and reused.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG=run-growth-bench
# shellcheck source=lib.sh
. "$HERE/lib.sh"

SIZES=${BENCH_SIZES:-"10000 100000 1000000"}
NOW=${BENCH_NOW:-2025-06-01T09:00:00Z}
REPEATS=${BENCH_REPEATS:-3}
export BENCH_ANNIVERSARIES=${BENCH_ANNIVERSARIES:-0.3} BENCH_DATES=${BENCH_DATES:-0.1}

if ! command -v remind >/dev/null 2>&1 || [ ! -x /usr/bin/time ] || ! command -v sqlite3 >/dev/null 2>&1; then
    apt_install remind time sqlite3
fi
build_buzz " (static, -no-pie)" -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld
mkdir -p "$OUT"
make_tmproot buzz-growth-bench
isolate_env
mkdir -p "$XDG_CONFIG_HOME/birthdaybuzz" "$HOME"
# Every occasion kind the cards carry is planned.
printf '[general]\ntimezone = "UTC"\n[anniversaries]\nenabled = true\n[dates]\nenabled = true\n' \
    >"$XDG_CONFIG_HOME/birthdaybuzz/config.toml"

# measure CMD...: "SECONDS PEAK_MB" of the best of REPEATS runs (one for import).
measure() {
    local runs=$1; shift
    local best="" peak=0 t0 t1 wall rss
    for _ in $(seq "$runs"); do
        t0=$EPOCHREALTIME
        /usr/bin/time -f "%M" -o "$TMPROOT/time.out" "$@" >/dev/null 2>"$TMPROOT/stderr.out"
        t1=$EPOCHREALTIME
        wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
        rss=$(tail -n 1 "$TMPROOT/time.out")
        if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$wall; fi
        [ "$rss" -gt "$peak" ] && peak=$rss
    done
    awk -v s="$best" -v k="$peak" 'BEGIN { printf "%s %.1f\n", s, k / 1024 }'
}

REPORT=$OUT/last-growth-report.txt
declare -A IMPORT UPCOMING STATUS REMIND IMPORT_MB UPCOMING_MB FLOOR
{
    echo "growth: $(nproc) cores, --now $NOW, anniversaries $BENCH_ANNIVERSARIES, labelled dates $BENCH_DATES, best of $REPEATS (import: 1 run)"
    printf '%-9s %10s %9s %9s %12s %9s %11s %10s\n' contacts "import s" "MB" "floor s" "upcoming s" "MB" "status ms" "remind s"
    echo "(import: one run; floor: SQLite alone writing the same rows again, one run (lib.sh, sqlite_floor);"
    echo " upcoming and remind: best of $REPEATS; status --waybar: median of 30)"
} | tee "$REPORT"
for n in $SIZES; do
    vcf=$OUT/cards-$n-a$BENCH_ANNIVERSARIES-d$BENCH_DATES.vcf rem=$OUT/cards-$n-a$BENCH_ANNIVERSARIES-d$BENCH_DATES.rem
    if [ ! -s "$vcf" ] || [ ! -s "$rem" ] || [ "$HERE/generate_cards.py" -nt "$vcf" ]; then
        log "generating $n cards"
        python3 "$HERE/generate_cards.py" "$n" "$vcf" "$rem" >/dev/null
    fi
    data=$TMPROOT/data-$n
    read -r IMPORT[$n] IMPORT_MB[$n] < <(measure 1 "$BUZZ" --data-dir "$data" --now "$NOW" import "$vcf")
    FLOOR[$n]=$(sqlite_floor "$data/buzz.sqlite")
    read -r UPCOMING[$n] UPCOMING_MB[$n] < <(measure "$REPEATS" "$BUZZ" --data-dir "$data" --now "$NOW" upcoming --json)
    # status is a few ms: the median of 30 starts, timed by Python around the
    # process alone (GNU time's own fork and exec would be a tenth of it).
    STATUS[$n]=$(python3 - "$BUZZ" "$data" "$NOW" <<'PY'
import statistics, subprocess, sys, time
buzz, data, now = sys.argv[1:4]
times = []
for _ in range(30):
    start = time.perf_counter()
    subprocess.run([buzz, "--data-dir", data, "--now", now, "status", "--waybar"], stdout=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - start)
print("%.4f" % statistics.median(times))
PY
)
    read -r REMIND[$n] _ < <(measure "$REPEATS" remind -n "$rem" "${NOW:0:10}")
    printf '%-9s %10.3f %9.1f %9.3f %12.4f %9.1f %11.1f %10.3f\n' "$n" "${IMPORT[$n]}" "${IMPORT_MB[$n]}" "${FLOOR[$n]}" "${UPCOMING[$n]}" \
        "${UPCOMING_MB[$n]}" "$(awk -v s="${STATUS[$n]}" 'BEGIN { print s * 1000 }')" "${REMIND[$n]}" | tee -a "$REPORT"
    rm -rf "$data"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = op == "<=" ? v <= t : v >= t; print ok ? "PASS" : "FAIL" }'; }
{
    if [ -n "${IMPORT[100000]:-}" ]; then
        r=$(ratio "${REMIND[100000]}" "${UPCOMING[100000]}")
        echo "upcoming at 100k: remind -n / buzz = ${r}x (target >= 4): $(verdict "$r" 4 '>=')"
        s=$(awk -v s="${STATUS[100000]}" 'BEGIN { printf "%.1f", s * 1000 }')
        echo "status --waybar at 100k: $s ms (target <= 10): $(verdict "$s" 10 '<=')"
    fi
    if [ -n "${IMPORT[100000]:-}" ] && [ -n "${IMPORT[1000000]:-}" ]; then
        r=$(ratio "${IMPORT[1000000]}" "${IMPORT[100000]}")
        echo "import 1M / 100k = ${r}x (target <= 11): $(verdict "$r" 11 '<='); peak at 1M ${IMPORT_MB[1000000]} MB (target <= 300): $(verdict "${IMPORT_MB[1000000]}" 300 '<=')"
        echo "  SQLite alone, the same rows: 1M / 100k = $(ratio "${FLOOR[1000000]}" "${FLOOR[100000]}")x; buzz / SQLite alone: 100k $(ratio "${IMPORT[100000]}" "${FLOOR[100000]}")x, 1M $(ratio "${IMPORT[1000000]}" "${FLOOR[1000000]}")x"
        r=$(ratio "${UPCOMING[1000000]}" "${UPCOMING[100000]}")
        echo "upcoming 1M / 100k = ${r}x (target <= 2): $(verdict "$r" 2 '<=')"
    fi
} | tee -a "$REPORT"
log "report saved to $REPORT"
