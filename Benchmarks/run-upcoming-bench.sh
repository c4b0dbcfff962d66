#!/usr/bin/env bash
# Planning cost of the occasion kinds (docs/design/occasions.md): `buzz upcoming --json` on
# 100,000 imported cards, for one or two buzz binaries, on the same cards
# without anniversaries and with them on a fraction of the cards, and on cards
# with anniversaries and labelled dates (Apple's itemN.X-ABDATE + X-ABLabel).
# Run by hand: BUZZ_BIN=NEW [BUZZ_BASE_BIN=OLD] bash Benchmarks/run-upcoming-bench.sh
# (without BUZZ_BIN, a release build of this checkout is used).
#
# Knobs: BENCH_CARDS (100000), BENCH_NOW (2025-06-01T09:00:00Z), BENCH_REPEATS (5),
# BENCH_FRACTIONS ("0 0.3 1": the fractions of cards with an anniversary),
# BENCH_DATES (0.1: the fraction of cards with a labelled date, in one more case
# with anniversaries on BENCH_DATES_ANNIVERSARIES, 0.3, of them; 0: no such case).
# The target: upcoming with anniversaries (and labelled dates) within 1.3x of
# the base binary on the cards without them. A base binary from before labelled
# dates reads those cards' birthdays and anniversaries only.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG='run-upcoming-bench'
# shellcheck source=lib.sh
. "$HERE/lib.sh"

N=${BENCH_CARDS:-100000}
NOW=${BENCH_NOW:-2025-06-01T09:00:00Z}
REPEATS=${BENCH_REPEATS:-5}
FRACTIONS=${BENCH_FRACTIONS:-"0 0.3 1"}
DATES=${BENCH_DATES:-0.1}
DATES_ANNIVERSARIES=${BENCH_DATES_ANNIVERSARIES:-0.3}
# The cases, "ANNIVERSARIES:DATES" (fractions of the cards).
CASES=()
for fraction in $FRACTIONS; do CASES+=("$fraction:0"); done
if [ "$DATES" != "0" ]; then CASES+=("$DATES_ANNIVERSARIES:$DATES"); fi

build_buzz "" -c release
mkdir -p "$OUT"
make_tmproot buzz-upcoming-bench
mkdir -p "$TMPROOT/xdg-config"

# run_once CMD...: "WALL CPU" seconds of one run (CPU = user + system, from
# /usr/bin/time), so a machine busy with other work shows in WALL, not in CPU.
run_once() {
    local t0 t1 tf=$TMPROOT/time.out
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%U %S' -o "$tf" "$@" >/dev/null
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" -v cpu="$(tail -n 1 "$tf")" \
        'BEGIN { split(cpu, c, " "); printf "%.3f %.3f\n", b - a, c[1] + c[2] }'
}

REPORT=$OUT/last-upcoming-report.txt
{
    echo "buzz upcoming --json on $N cards, best of $REPEATS (runs of the binaries interleaved), --now $NOW ($(nproc) cores)"
    printf '%-8s %-6s %-6s %10s %10s %8s %8s\n' "anniv." "dates" "binary" "wall s" "cpu s" "events" "labelled"
} | tee "$REPORT"
binaries=("new:$BUZZ")
if [ -n "${BUZZ_BASE_BIN:-}" ]; then binaries=("base:$BUZZ_BASE_BIN" "${binaries[@]}"); fi
BASE_WALL=""; BASE_CPU=""
for case in "${CASES[@]}"; do
    fraction=${case%%:*}; dates=${case#*:}
    suffix=""
    if [ "$fraction" != "0" ]; then suffix="-a$fraction"; fi
    if [ "$dates" != "0" ]; then suffix="$suffix-d$dates"; fi
    vcf=$OUT/cards-$N$suffix.vcf
    if [ ! -s "$vcf" ] || [ "$HERE/generate_cards.py" -nt "$vcf" ]; then
        log "generating $N cards, anniversaries on $fraction of them, labelled dates on $dates"
        BENCH_ANNIVERSARIES=$fraction BENCH_DATES=$dates python3 "$HERE/generate_cards.py" "$N" "$vcf.tmp" "$TMPROOT/unused.rem"
        mv "$vcf.tmp" "$vcf"
    fi
    declare -A wall=() cpu=() events=() labelled=()
    for entry in "${binaries[@]}"; do
        name=${entry%%:*}; bin=${entry#*:}
        XDG_CONFIG_HOME=$TMPROOT/xdg-config "$bin" --data-dir "$TMPROOT/data-$name$suffix" --now "$NOW" import "$vcf" >/dev/null
        XDG_CONFIG_HOME=$TMPROOT/xdg-config "$bin" --data-dir "$TMPROOT/data-$name$suffix" --now "$NOW" \
            upcoming --json >"$TMPROOT/upcoming.json"
        events[$name]=$(grep -c '"id"' "$TMPROOT/upcoming.json" || true)
        labelled[$name]=$(grep -c '"label"' "$TMPROOT/upcoming.json" || true)
    done
    for ((i = 0; i < REPEATS; i++)); do
        for entry in "${binaries[@]}"; do
            name=${entry%%:*}; bin=${entry#*:}
            read -r w c < <(XDG_CONFIG_HOME=$TMPROOT/xdg-config run_once "$bin" --data-dir "$TMPROOT/data-$name$suffix" \
                --now "$NOW" upcoming --json)
            if [ -z "${wall[$name]:-}" ] || awk -v a="$w" -v b="${wall[$name]}" 'BEGIN { exit !(a < b) }'; then wall[$name]=$w; fi
            if [ -z "${cpu[$name]:-}" ] || awk -v a="$c" -v b="${cpu[$name]}" 'BEGIN { exit !(a < b) }'; then cpu[$name]=$c; fi
        done
    done
    for entry in "${binaries[@]}"; do
        name=${entry%%:*}
        printf '%-8s %-6s %-6s %10s %10s %8s %8s\n' "$fraction" "$dates" "$name" "${wall[$name]}" "${cpu[$name]}" \
            "${events[$name]}" "${labelled[$name]}" | tee -a "$REPORT"
    done
    if [ "$fraction" = "0" ] && [ "$dates" = "0" ]; then
        BASE_WALL=${wall[base]:-${wall[new]}}; BASE_CPU=${cpu[base]:-${cpu[new]}}
    elif [ -n "$BASE_WALL" ]; then
        awk -v w="${wall[new]}" -v c="${cpu[new]}" -v bw="$BASE_WALL" -v bc="$BASE_CPU" 'BEGIN {
            rw = w / bw; rc = c / bc
            printf "  new vs. the base without anniversaries or dates: %.2fx wall, %.2fx cpu (target <= 1.3x): %s\n", rw, rc,
                (rw <= 1.3 || rc <= 1.3) ? "PASS" : "FAIL" }' | tee -a "$REPORT"
        if [ -n "${wall[base]:-}" ]; then
            awk -v w="${wall[new]}" -v c="${cpu[new]}" -v bw="${wall[base]}" -v bc="${cpu[base]}" 'BEGIN {
                printf "  new vs. the base on the same cards: %.2fx wall, %.2fx cpu\n", w / bw, c / bc }' | tee -a "$REPORT"
            if [ "$dates" != "0" ] && [ "${labelled[base]}" = "0" ]; then
                echo "  (the base binary plans no labelled dates: on these cards it plans birthdays and anniversaries only)" \
                    | tee -a "$REPORT"
            fi
        fi
    fi
    unset wall cpu events labelled
done
log "report saved to $REPORT"
