#!/usr/bin/env bash
# Planning cost of a second occasion (DESIGN §3b): `buzz upcoming --json` on
# 100,000 imported cards, for one or two buzz binaries, on the same cards
# without anniversaries and with them on a fraction of the cards.
# Run by hand: BUZZ_BIN=NEW [BUZZ_BASE_BIN=OLD] bash Benchmarks/run-upcoming-bench.sh
# (without BUZZ_BIN, a release build of this checkout is used).
#
# Knobs: BENCH_CARDS (100000), BENCH_NOW (2025-06-01T09:00:00Z), BENCH_REPEATS (5),
# BENCH_FRACTIONS ("0 0.3 1": the fractions of cards with an anniversary).
# The target: upcoming with anniversaries within 1.3x of the base binary
# on the cards without them.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG='run-upcoming-bench'
# shellcheck source=lib.sh
. "$HERE/lib.sh"

N=${BENCH_CARDS:-100000}
NOW=${BENCH_NOW:-2025-06-01T09:00:00Z}
REPEATS=${BENCH_REPEATS:-5}
FRACTIONS=${BENCH_FRACTIONS:-"0 0.3 1"}

build_buzz "" -c release
mkdir -p "$OUT"
make_tmproot buzz-upcoming-bench
mkdir -p "$TMPROOT/xdg-config"

# best_secs REPEATS CMD...: the fastest wall time of REPEATS runs, in seconds.
best_secs() {
    local n=$1 i best="" t0 t1 s; shift
    for ((i = 0; i < n; i++)); do
        t0=$EPOCHREALTIME
        "$@" >/dev/null
        t1=$EPOCHREALTIME
        s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$s; fi
    done
    echo "$best"
}

REPORT=$OUT/last-upcoming-report.txt
{
    echo "buzz upcoming --json on $N cards, best of $REPEATS, --now $NOW ($(nproc) cores)"
    printf '%-12s %-10s %10s %10s\n' "anniv." "binary" "seconds" "events"
} | tee "$REPORT"
BASE_ZERO=""
for fraction in $FRACTIONS; do
    suffix=""
    if [ "$fraction" != "0" ]; then suffix="-a$fraction"; fi
    vcf=$OUT/cards-$N$suffix.vcf
    if [ ! -s "$vcf" ] || [ "$HERE/generate_cards.py" -nt "$vcf" ]; then
        log "generating $N cards, anniversaries on $fraction of them"
        BENCH_ANNIVERSARIES=$fraction python3 "$HERE/generate_cards.py" "$N" "$vcf.tmp" "$TMPROOT/unused.rem"
        mv "$vcf.tmp" "$vcf"
    fi
    binaries=("new:$BUZZ")
    if [ -n "${BUZZ_BASE_BIN:-}" ]; then binaries=("base:$BUZZ_BASE_BIN" "${binaries[@]}"); fi
    for entry in "${binaries[@]}"; do
        name=${entry%%:*}; bin=${entry#*:}
        data=$TMPROOT/data-$name-$fraction
        XDG_CONFIG_HOME=$TMPROOT/xdg-config "$bin" --data-dir "$data" --now "$NOW" import "$vcf" >/dev/null
        secs=$(XDG_CONFIG_HOME=$TMPROOT/xdg-config best_secs "$REPEATS" "$bin" --data-dir "$data" --now "$NOW" upcoming --json)
        events=$(XDG_CONFIG_HOME=$TMPROOT/xdg-config "$bin" --data-dir "$data" --now "$NOW" upcoming --json | grep -c '"id"' || true)
        printf '%-12s %-10s %10s %10s\n' "$fraction" "$name" "$secs" "$events" | tee -a "$REPORT"
        if [ "$fraction" = "0" ]; then
            if [ "$name" = "base" ] || [ -z "$BASE_ZERO" ]; then BASE_ZERO=$secs; fi
        elif [ -n "$BASE_ZERO" ] && [ "$name" = "new" ]; then
            awk -v a="$secs" -v b="$BASE_ZERO" 'BEGIN { r = a / b; printf "  %.2fx the base on cards without anniversaries (target <= 1.3x): %s\n", r, (r <= 1.3 ? "PASS" : "FAIL") }' \
                | tee -a "$REPORT"
        fi
    done
done
log "report saved to $REPORT"
