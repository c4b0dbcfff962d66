#!/usr/bin/env bash
# Phone preset benchmark: a cold `buzz send` through the telegram preset (its
# api_url a loopback sink) side by side with the same send through the generic
# webhook preset to the same sink. Both are one process, one HTTP POST; the
# telegram preset only adds reading its keys, the token and the HTML body, so
# its median should stay within BENCH_TARGET_RATIO (1.1) of the generic one.
# Run by hand: bash Benchmarks/run-phone-bench.sh   (never part of `swift test`)
# See Benchmarks/README.md ("Phone preset benchmark").
#
# Exits 0 whether the target passes or fails (it is a report); exits nonzero
# only if a setup step or a measured command fails, or the sink did not
# receive exactly the requests it should have.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG='run-phone-bench'
# shellcheck source=lib.sh
. "$HERE/lib.sh"

RUNS=${BENCH_RUNS:-30}                     # timed runs of each preset per round
ROUNDS=${BENCH_ROUNDS:-2}                  # rounds; each starts its pairs with the other preset
WARMUP=${BENCH_WARMUP:-3}
MESSAGE=${BENCH_MESSAGE:-hello}
BUZZ_SCRATCH=${BUZZ_SCRATCH:-$ROOT/.build-static}
TARGET_RATIO=${BENCH_TARGET_RATIO:-1.1}    # telegram median / generic median must be <= this
TOKEN=123456:AAbenchTokenNotASecret
REPORT=$OUT/last-phone-report.txt

[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer (got $RUNS)"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer (got $ROUNDS)"
mkdir -p "$OUT"

if [ -z "$(find_nginx)" ]; then
    log "installing nginx-light (apt-get)"
    apt_install nginx-light || log "could not install nginx-light: using the Python sink"
fi
NGINX=$(find_nginx)

build_buzz " (the first static build takes a few minutes)" \
    -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld --scratch-path "$BUZZ_SCRATCH"

make_tmproot buzz-phone-bench
mkdir -p "$TMPROOT/xdg-config" "$TMPROOT/xdg-data" "$TMPROOT/xdg-cache" "$TMPROOT/home"
new_sink_log
if [ -n "$NGINX" ]; then
    start_nginx_sink "" "keepalive_timeout 30s;"
else
    python3 "$HERE/send_sink.py" "$SINK_LOG" "$TMPROOT/sink/port" 900 &
    SINK_PID=$!
    for _ in $(seq 100); do [ -s "$TMPROOT/sink/port" ] && break; sleep 0.05; done
    [ -s "$TMPROOT/sink/port" ] || die "the Python sink did not start"
    PORT=$(cat "$TMPROOT/sink/port")
    SINK_DESC="Python ThreadingHTTPServer (send_sink.py)"
fi
sink_ready

CONFIG=$TMPROOT/config.toml
cat >"$CONFIG" <<EOF
[channels.generic]
type = "webhook"
url = "http://127.0.0.1:$PORT$URL_PATH"

[channels.telegram]
type = "webhook"
preset = "telegram"
bot_token_env = "BENCH_BOT_TOKEN"
chat_id = -1001234
api_url = "http://127.0.0.1:$PORT"
EOF
isolate_env
export BENCH_BOT_TOKEN=$TOKEN
GENERIC_CMD="$BUZZ --config $CONFIG send --channel generic $MESSAGE"
TELEGRAM_CMD="$BUZZ --config $CONFIG send --channel telegram $MESSAGE"

# One run of each, checked: the generic POST to /hook, the telegram one to /bot<token>/sendMessage.
base=$(sink_lines)
$GENERIC_CMD >/dev/null
check_phase "generic" "$base" 1 1 >/dev/null
base=$(sink_lines)
$TELEGRAM_CMD >/dev/null
URL_PATH="/bot$TOKEN/sendMessage" check_phase "telegram" "$base" 1 1 >/dev/null

LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$BUZZ" >/dev/null
: >"$TMPROOT/generic.times"
: >"$TMPROOT/telegram.times"
# Interleaved run by run (generic, telegram, then telegram, generic, …), so a
# load that comes and goes (other builds) weighs on both alike; hyperfine runs
# one command's runs in a block, which on a shared machine measures the load.
# timed NAME: one run, its wall time in ms appended to NAME.times (after the warm-ups).
timed() {
    local name=$1 cmd t0 t1 rc=0
    if [ "$name" = generic ]; then cmd=$GENERIC_CMD; else cmd=$TELEGRAM_CMD; fi
    t0=$EPOCHREALTIME
    $cmd >"$TMPROOT/run.out" 2>&1 || rc=$?
    t1=$EPOCHREALTIME
    if [ "$rc" -ne 0 ]; then sed 's/^/  | /' "$TMPROOT/run.out" >&2; die "$name: buzz send failed (exit $rc)"; fi
    ((i < WARMUP)) || awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$TMPROOT/$name.times"
}
for ((round = 0; round < ROUNDS; round++)); do
    log "round $((round + 1))/$ROUNDS: $RUNS pairs after $WARMUP warm-up pairs, interleaved"
    for ((i = 0; i < WARMUP + RUNS; i++)); do
        if (((i + round) % 2 == 0)); then timed generic; timed telegram; else timed telegram; timed generic; fi
    done
done
sent=$((ROUNDS * (WARMUP + RUNS)))
wait_sink $((2 + 2 * sent))
[ "$(sink_lines)" -eq $((2 + 2 * sent)) ] || die "the sink received $(sink_lines) requests, expected $((2 + 2 * sent))"
[ "$(awk -F'\t' -v p="/bot$TOKEN/sendMessage" '$2 == p && $3 == "200"' "$SINK_LOG" | wc -l)" -eq $((1 + sent)) ] \
    || die "not every telegram send reached /bot…/sendMessage"

stats() {
    sort -g "$1" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'
}
read -r G_MED G_MIN G_MAX < <(stats "$TMPROOT/generic.times")
read -r T_MED T_MIN T_MAX < <(stats "$TMPROOT/telegram.times")
{
    echo
    echo "BirthdayBuzz phone preset benchmark  ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r))"
    echo "load average before the runs: $LOADAVG"
    echo "buzz: $BUZZ ($(stat -L -c %s "$BUZZ") bytes)"
    echo "sink: $SINK_DESC, 127.0.0.1:$PORT; timer: bash EPOCHREALTIME, $ROUNDS rounds x $RUNS runs per preset (after $WARMUP warm-ups), interleaved run by run"
    echo "  generic:  buzz send --channel generic \"$MESSAGE\"   (POST $URL_PATH)"
    echo "  telegram: buzz send --channel telegram \"$MESSAGE\"  (POST /bot<token>/sendMessage, token from the environment)"
    echo
    awk -v gm="$G_MED" -v gn="$G_MIN" -v gx="$G_MAX" -v tm="$T_MED" -v tn="$T_MIN" -v tx="$T_MAX" -v target="$TARGET_RATIO" '
    BEGIN {
        printf "%-22s %10s %10s %10s\n", "wall time (ms)", "median", "min", "max"
        printf "%-22s %10.2f %10.2f %10.2f\n", "buzz send (generic)", gm, gn, gx
        printf "%-22s %10.2f %10.2f %10.2f\n", "buzz send (telegram)", tm, tn, tx
        r = gm > 0 ? tm / gm : 1e9
        printf "\ntelegram median / generic median: %.3fx (target <= %sx): %s\n", r, target, r <= target ? "PASS" : "FAIL"
        printf "telegram min / generic min:       %.3fx\n", (gn > 0 ? tn / gn : 0)
    }'
} | tee "$REPORT"
log "report saved to $REPORT"
exit 0
