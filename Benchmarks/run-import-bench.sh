#!/usr/bin/env bash
# Import/upcoming benchmark for buzz, against vobject (parse) and remind (-n).
# Run by hand: bash Benchmarks/run-import-bench.sh   (never part of `swift test`)
# See Benchmarks/README.md for what is measured and the environment knobs.
#
# Exits 0 whether the targets pass or fail (it is a report); exits nonzero only
# if a setup step or a measured command itself fails.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG='run-import-bench'
# shellcheck source=lib.sh
. "$HERE/lib.sh"

N=${BENCH_CARDS:-100000}
NOW=${BENCH_NOW:-2025-06-01T09:00:00Z}   # passed to buzz --now
REMIND_DATE=${NOW:0:10}                   # same day, passed to remind
REPEATS=${BENCH_REPEATS:-3}               # best-of for upcoming and remind
IMPORT_RUNS=${BENCH_IMPORT_RUNS:-1}       # fresh data dir each time; best is reported
VOBJECT_SPEC=${VOBJECT_SPEC:-vobject==0.9.9}

# BENCH_ANNIVERSARIES: the fraction of cards that also carry an anniversary
# (0 to 1; default 0). Those files are named cards-N-aF.{vcf,rem}.
ANNIVERSARIES=${BENCH_ANNIVERSARIES:-0}
export BENCH_ANNIVERSARIES=$ANNIVERSARIES
SUFFIX=""
if [ "$ANNIVERSARIES" != "0" ]; then SUFFIX="-a$ANNIVERSARIES"; fi
VCF=$OUT/cards-$N$SUFFIX.vcf
REM=$OUT/cards-$N$SUFFIX.rem
VENV=$OUT/venv

mkdir -p "$OUT"

# ---------------------------------------------------------------- tools
need=()
command -v remind >/dev/null 2>&1 || need+=(remind)
[ -x /usr/bin/time ] || need+=(time)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
if [ "${#need[@]}" -gt 0 ]; then
    log "installing ${need[*]} (apt-get)"
    apt_install "${need[@]}"
fi
REMIND=$(command -v remind)

make_venv "$VENV"
if ! "$VENV/bin/python" -c 'import vobject' >/dev/null 2>&1; then
    log "installing $VOBJECT_SPEC into $VENV (pip)"
    "$VENV/bin/python" -m pip install -q "$VOBJECT_SPEC"
fi
VOBJECT_VERSION=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("vobject"))')

# ---------------------------------------------------------------- buzz
build_args=(-c release)
if [ -n "${BUZZ_SCRATCH:-}" ]; then build_args+=(--scratch-path "$BUZZ_SCRATCH"); fi
build_buzz "" "${build_args[@]}"

# ---------------------------------------------------------------- data
if [ ! -s "$VCF" ] || [ ! -s "$REM" ] \
        || [ "$HERE/generate_cards.py" -nt "$VCF" ] || [ "$HERE/generate_cards.py" -nt "$REM" ]; then
    log "generating $N cards"
    python3 "$HERE/generate_cards.py" "$N" "$VCF.tmp" "$REM.tmp"
    mv "$VCF.tmp" "$VCF"
    mv "$REM.tmp" "$REM"
else
    log "reusing $VCF and $REM"
fi
VCF_BYTES=$(stat -c %s "$VCF")
REM_LINES=$(grep -c '^REM ' "$REM" || true)

make_tmproot buzz-bench
mkdir -p "$TMPROOT/xdg-config"   # empty: buzz falls back to its embedded defaults

# ---------------------------------------------------------------- measuring
# measure STDOUT_FILE CMD...  -> sets M_SECS (wall, ms resolution, taken with
# bash's EPOCHREALTIME around /usr/bin/time) and M_RSS_KB (/usr/bin/time %M).
# A failing command aborts the run, with its stderr shown.
measure() {
    local stdout_file=$1; shift
    local tf=$TMPROOT/time.out ef=$TMPROOT/stderr.out t0 t1 rc=0
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%e %M' -o "$tf" "$@" >"$stdout_file" 2>"$ef" || rc=$?
    t1=$EPOCHREALTIME
    if [ "$rc" -ne 0 ]; then
        printf 'run-import-bench: command failed (exit %s): %s\n' "$rc" "$*" >&2
        sed 's/^/  | /' "$ef" >&2
        exit 1
    fi
    if [ -s "$ef" ]; then sed 's/^/  stderr| /' "$ef" | head -n 20 >&2; fi
    local m
    read -r _ m < <(tail -n 1 "$tf")
    M_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    M_RSS_KB=$m
}

# best_of REPEATS STDOUT_FILE CMD...  -> B_SECS (min), B_RSS_KB (max)
best_of() {
    local n=$1 i; shift
    B_SECS=""; B_RSS_KB=0
    for ((i = 0; i < n; i++)); do
        measure "$@"
        if [ -z "$B_SECS" ] || awk -v a="$M_SECS" -v b="$B_SECS" 'BEGIN { exit !(a < b) }'; then
            B_SECS=$M_SECS
        fi
        if [ "$M_RSS_KB" -gt "$B_RSS_KB" ]; then B_RSS_KB=$M_RSS_KB; fi
    done
}

cat "$VCF" "$REM" >/dev/null   # warm the page cache so every contender reads from memory

# (a) buzz import into a fresh data dir
IMPORT_SECS=""; IMPORT_RSS_KB=0
for ((run = 0; run < IMPORT_RUNS; run++)); do
    DATA=$TMPROOT/data-$run
    mkdir -p "$DATA"
    log "buzz import ($((run + 1))/$IMPORT_RUNS)"
    XDG_CONFIG_HOME=$TMPROOT/xdg-config measure "$TMPROOT/import.out" \
        "$BUZZ" --data-dir "$DATA" --now "$NOW" import "$VCF"
    sed 's/^/  import| /' "$TMPROOT/import.out" | head -n 10 >&2
    if [ -z "$IMPORT_SECS" ] || awk -v a="$M_SECS" -v b="$IMPORT_SECS" 'BEGIN { exit !(a < b) }'; then
        IMPORT_SECS=$M_SECS
    fi
    if [ "$M_RSS_KB" -gt "$IMPORT_RSS_KB" ]; then IMPORT_RSS_KB=$M_RSS_KB; fi
done
DB_BYTES=$(du -sb "$DATA" | cut -f1)

# (a2) the floor: SQLite alone writing the same rows again (lib.sh)
log "SQLite alone, the same rows (lib.sh sqlite_floor)"
FLOOR_SECS=$(sqlite_floor "$DATA/buzz.sqlite")

# (b) buzz upcoming --json on that data dir
log "buzz upcoming --json (best of $REPEATS)"
XDG_CONFIG_HOME=$TMPROOT/xdg-config best_of "$REPEATS" "$TMPROOT/upcoming.json" \
    "$BUZZ" --data-dir "$DATA" --now "$NOW" upcoming --json
UPCOMING_SECS=$B_SECS; UPCOMING_RSS_KB=$B_RSS_KB
UPCOMING_EVENTS=$(python3 - "$TMPROOT/upcoming.json" <<'PY'
import json, sys
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        v = json.load(f)
except ValueError as e:
    sys.exit("not JSON: %s" % e)
if not isinstance(v, list):
    sys.exit("not a JSON array")
print(len(v))
PY
) || die "buzz upcoming --json did not print a JSON array (first bytes: $(head -c 200 "$TMPROOT/upcoming.json"))"

# (c) vobject reference parse
log "vobject $VOBJECT_VERSION parse (1 run; takes a while)"
measure "$TMPROOT/vobject.out" "$VENV/bin/python" "$HERE/vobject_parse.py" "$VCF"
VOBJECT_SECS=$M_SECS; VOBJECT_RSS_KB=$M_RSS_KB
VOBJECT_RESULT=$(cat "$TMPROOT/vobject.out")

# (d) remind -n reference
log "remind -n (best of $REPEATS)"
best_of "$REPEATS" /dev/null "$REMIND" -n "$REM" "$REMIND_DATE"
REMIND_SECS=$B_SECS; REMIND_RSS_KB=$B_RSS_KB

# ---------------------------------------------------------------- report
REPORT=$OUT/last-report.txt
{
    echo
    echo "BirthdayBuzz import/upcoming benchmark  ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
    echo "input: $N cards (anniversaries on a fraction $ANNIVERSARIES), $VCF_BYTES bytes ($(basename "$VCF")); $REM_LINES REM lines; --now $NOW"
    echo "buzz: $BUZZ"
    echo "vobject $VOBJECT_VERSION: $VOBJECT_RESULT; remind: $("$REMIND" -V 2>&1 | sed -n 's/^\(REMIND [^ ]*\).*/\1/p' | head -n 1)"
    echo "buzz import: $(tr '\n' ' ' <"$TMPROOT/import.out" | cut -c1-120); data dir $DB_BYTES bytes"
    echo "buzz upcoming --json: $UPCOMING_EVENTS events"
    echo
    awk -v is="$IMPORT_SECS" -v ir="$IMPORT_RSS_KB" -v iruns="$IMPORT_RUNS" \
        -v us="$UPCOMING_SECS" -v ur="$UPCOMING_RSS_KB" \
        -v vs="$VOBJECT_SECS" -v vr="$VOBJECT_RSS_KB" \
        -v rs="$REMIND_SECS" -v rr="$REMIND_RSS_KB" -v reps="$REPEATS" -v fs="$FLOOR_SECS" '
    function mb(kb) { return kb / 1024 }
    function verdict(ok) { return ok ? "PASS" : "FAIL" }
    function ratio(a, b) { return b > 0 ? a / b : 1e9 }
    BEGIN {
        printf "%-34s %10s %14s\n", "measurement", "seconds", "peak RSS MB"
        printf "%-34s %10.3f %14.1f\n", "buzz import" (iruns > 1 ? " (best of " iruns ")" : ""), is, mb(ir)
        printf "%-34s %10.3f %14.1f\n", "buzz upcoming --json (best of " reps ")", us, mb(ur)
        printf "%-34s %10.3f %14.1f\n", "vobject readComponents", vs, mb(vr)
        printf "%-34s %10.3f %14.1f\n", "remind -n (best of " reps ")", rs, mb(rr)
        printf "%-34s %10.3f\n", "SQLite alone, the same rows", fs
        print ""
        printf "%-34s %10s %14s  %s\n", "check", "value", "target", "result"
        r1 = ratio(vs, is); r2 = ratio(rs, us)
        printf "%-34s %9.1fx %14s  %s\n", "vobject time / buzz import time", r1, ">= 60x", verdict(r1 >= 60)
        printf "%-34s %9.1fx %14s  %s\n", "remind time / buzz upcoming time", r2, ">= 4x", verdict(r2 >= 4)
        printf "%-34s %9.3fs %14s  %s\n", "buzz import time", is, "<= 0.3 s", verdict(is <= 0.3)
        printf "%-34s %9.3fs %14s  %s\n", "buzz upcoming time", us, "<= 0.2 s", verdict(us <= 0.2)
        printf "%-34s %8.1fMB %14s  %s\n", "buzz import peak RSS", mb(ir), "<= 100 MB", verdict(mb(ir) <= 100)
        printf "%-34s %8.1fMB %14s  %s\n", "buzz upcoming peak RSS", mb(ur), "<= 100 MB", verdict(mb(ur) <= 100)
        print ""
        printf "the floor (SQLite alone) takes %.3f s: buzz import is %.2fx it; vobject / the floor = %.1fx\n", fs, ratio(is, fs), ratio(vs, fs)
    }'
    if [ "$UPCOMING_EVENTS" -gt 64 ]; then
        echo "note: upcoming printed $UPCOMING_EVENTS events; the default limit is 64"
    fi
} | tee "$REPORT"
log "report saved to $REPORT"
exit 0
