#!/usr/bin/env bash
# Send benchmark: a cold `buzz send` of one message to a loopback webhook, against
# `apprise -b … json://` posting to the same sink. Median of BENCH_RUNS (10) runs
# each, printed with the ratio apprise/buzz.
# Run by hand: bash Benchmarks/run-send-bench.sh   (never part of `swift test`)
# See Benchmarks/README.md ("Send benchmark") for what is measured and the knobs.
#
# Exits 0 whether the targets pass or fail (it is a report); exits nonzero only
# if a setup step or a measured command fails, or the sink did not receive
# exactly the requests it should have.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG='run-send-bench'
# shellcheck source=lib.sh
. "$HERE/lib.sh"

RUNS=${BENCH_RUNS:-10}
PAIRS=${BENCH_PAIRS:-40}                   # rounds of buzz and curl in turns (the curl target's figures)
WARMUP=${BENCH_WARMUP:-3}                   # untimed runs of each tool before its timed ones
SINK=${BENCH_SINK:-auto}                   # auto | nginx | python
TIMER=${BENCH_TIMER:-auto}                 # auto | hyperfine | bash
MESSAGE=${BENCH_MESSAGE:-hello}
APPRISE_SPEC=${APPRISE_SPEC:-apprise==2.2.0}
BUZZ_SCRATCH=${BUZZ_SCRATCH:-$ROOT/.build-static}
TARGET_MS=${BENCH_TARGET_MS:-20}           # buzz median must be <= this
TARGET_RATIO=${BENCH_TARGET_RATIO:-30}     # apprise median / buzz median must be >= this
TARGET_CURL=${BENCH_TARGET_CURL:-1.3}      # buzz median / curl median must be <= this
VENV=$OUT/send-venv
REPORT=$OUT/last-send-report.txt

case $SINK in auto | nginx | python) ;; *) die "BENCH_SINK must be auto, nginx or python (got $SINK)" ;; esac
case $TIMER in auto | hyperfine | bash) ;; *) die "BENCH_TIMER must be auto, hyperfine or bash (got $TIMER)" ;; esac
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer (got $RUNS)"
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "BENCH_PAIRS must be a positive integer (got $PAIRS)"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "BENCH_WARMUP must be a non-negative integer (got $WARMUP)"

mkdir -p "$OUT"

# ---------------------------------------------------------------- tools
need=()
[ -x /usr/bin/time ] || need+=(time)
if [ "$TIMER" != bash ] && ! command -v hyperfine >/dev/null 2>&1; then need+=(hyperfine); fi
if [ "$SINK" != python ] && [ -z "$(find_nginx)" ]; then need+=(nginx-light); fi
if [ "${#need[@]}" -gt 0 ]; then
    log "installing ${need[*]} (apt-get)"
    if ! apt_install "${need[@]}"; then
        # Retry one by one, so that a missing optional tool only changes the method.
        for pkg in "${need[@]}"; do apt_install "$pkg" || log "could not install $pkg"; done
    fi
fi
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is missing"

NGINX=$(find_nginx)
if [ "$SINK" = auto ]; then
    if [ -n "$NGINX" ]; then SINK=nginx; else SINK=python; log "nginx unavailable: using the Python sink"; fi
fi
[ "$SINK" != nginx ] || [ -n "$NGINX" ] || die "BENCH_SINK=nginx but nginx is not installed"

if [ "$TIMER" = auto ]; then
    if command -v hyperfine >/dev/null 2>&1; then TIMER=hyperfine; else TIMER=bash; log "hyperfine unavailable: timing with EPOCHREALTIME"; fi
fi
[ "$TIMER" != hyperfine ] || command -v hyperfine >/dev/null 2>&1 || die "BENCH_TIMER=hyperfine but hyperfine is not installed"

make_venv "$VENV"
ensure_apprise "$VENV" "$APPRISE_SPEC"
APPRISE=$VENV/bin/apprise
[ -x "$APPRISE" ] || die "apprise not found at $APPRISE"

# ---------------------------------------------------------------- buzz
build_buzz " (the first static build takes a few minutes)" \
    -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld --scratch-path "$BUZZ_SCRATCH"
BUZZ_BYTES=$(stat -L -c %s "$BUZZ")
if [ "$(head -c 4 "$BUZZ" | od -An -c | tr -d ' ')" != '177ELF' ]; then
    BUZZ_LINK="not an ELF binary"
elif ldd "$BUZZ" 2>/dev/null | grep -q 'libswiftCore'; then
    BUZZ_LINK="links libswiftCore dynamically (not the static-stdlib install form)"
else
    BUZZ_LINK="static Swift stdlib"
fi

# ---------------------------------------------------------------- temp dirs
make_tmproot buzz-send-bench
mkdir -p "$TMPROOT/xdg-config" "$TMPROOT/xdg-data" "$TMPROOT/xdg-cache" "$TMPROOT/home"
new_sink_log

# ---------------------------------------------------------------- sink
if [ "$SINK" = nginx ]; then
    start_nginx_sink "" "keepalive_timeout 30s;"
else
    "$VENV/bin/python" "$HERE/send_sink.py" "$SINK_LOG" "$TMPROOT/sink/port" 900 &
    SINK_PID=$!
    for _ in $(seq 100); do [ -s "$TMPROOT/sink/port" ] && break; sleep 0.05; done
    [ -s "$TMPROOT/sink/port" ] || die "the Python sink did not start"
    PORT=$(cat "$TMPROOT/sink/port")
    SINK_DESC="Python ThreadingHTTPServer (send_sink.py), HTTP/1.1, TCP_NODELAY"
fi
sink_ready

# ---------------------------------------------------------------- buzz config
CONFIG=$TMPROOT/config.toml
cat >"$CONFIG" <<EOF
[channels.hook]
type = "webhook"
url = "http://127.0.0.1:$PORT$URL_PATH"
EOF
isolate_env

BUZZ_CMD=("$BUZZ" --config "$CONFIG" send --channel hook "$MESSAGE")
APPRISE_CMD=("$APPRISE" -b "$MESSAGE" "json://127.0.0.1:$PORT$URL_PATH")

# ---------------------------------------------------------------- measuring
# run_once NAME CMD...: one run with its output shown; dies if it fails.
run_once() {
    local name=$1 rc=0; shift
    "$@" >"$TMPROOT/once.out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        printf 'run-send-bench: %s failed (exit %s): %s\n' "$name" "$rc" "$*" >&2
        sed 's/^/  | /' "$TMPROOT/once.out" | head -n 30 >&2
        exit 1
    fi
}

# time_runs NAME TIMES_FILE CMD...: RUNS timed runs, one wall time in ms per line.
time_runs() {
    local name=$1 times=$2 i t0 t1 rc; shift 2
    : >"$times"
    if [ "$TIMER" = hyperfine ]; then
        local json=$TMPROOT/$name.json
        rc=0
        hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic --time-unit millisecond \
            --export-json "$json" --command-name "$name" "$(printf '%q ' "$@")" >&2 || rc=$?
        if [ "$rc" -ne 0 ]; then
            log "hyperfine failed for $name (exit $rc); one more run to show why:"
            run_once "$name" "$@"
            die "$name: hyperfine failed, although a single run succeeded"
        fi
        python3 - "$json" >"$times" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["times"]:
    print("%.3f" % (t * 1000))
PY
    else
        for ((i = 0; i < WARMUP; i++)); do run_once "$name" "$@"; done
        for ((i = 0; i < RUNS; i++)); do
            rc=0
            t0=$EPOCHREALTIME
            "$@" >"$TMPROOT/run.out" 2>&1 || rc=$?
            t1=$EPOCHREALTIME
            if [ "$rc" -ne 0 ]; then
                printf 'run-send-bench: %s failed (exit %s): %s\n' "$name" "$rc" "$*" >&2
                sed 's/^/  | /' "$TMPROOT/run.out" | head -n 30 >&2
                exit 1
            fi
            awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$times"
        done
    fi
    [ "$(wc -l <"$times")" -eq "$RUNS" ] || die "$name: expected $RUNS timings"
}

# stats TIMES_FILE -> "median min max mean"
stats() {
    sort -g "$1" | awk '{ v[NR] = $1; s += $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.3f %.3f %.3f %.3f\n", m, v[1], v[NR], s / NR }'
}

# rss_kb CMD...: peak RSS (KiB) of one run under /usr/bin/time.
rss_kb() {
    local rc=0
    /usr/bin/time -f '%M' -o "$TMPROOT/rss.out" "$@" >"$TMPROOT/once.out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        printf 'run-send-bench: failed (exit %s): %s\n' "$rc" "$*" >&2
        sed 's/^/  | /' "$TMPROOT/once.out" | head -n 30 >&2
        exit 1
    fi
    tail -n 1 "$TMPROOT/rss.out"
}

LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
# Read the binaries once so the first timed run does not pay for the disk.
cat "$BUZZ" >/dev/null

base=$(sink_lines)
log "buzz send ($RUNS runs, $TIMER)"
time_runs buzz "$TMPROOT/buzz.times" "${BUZZ_CMD[@]}"
check_phase "buzz send" "$base" "$((WARMUP + RUNS))" 1 >/dev/null
BUZZ_REQS=$((WARMUP + RUNS))

# curl posting a body of buzz's size (the sink logged it) to the same URL: the
# floor of a cold process that loads libcurl and sends one request.
BUZZ_BODY=$(awk -F'\t' 'NR == 1 { print $6 }' "$SINK_LOG")
BODY_FILE=$TMPROOT/body.json
python3 - "$BUZZ_BODY" "$MESSAGE" >"$BODY_FILE" <<'PY'
import json, sys
size, message = int(sys.argv[1]), sys.argv[2]
body = {"title": "BirthdayBuzz", "message": message, "pad": ""}
body["pad"] = "x" * max(0, size - len(json.dumps(body, separators=(",", ":"))))
sys.stdout.write(json.dumps(body, separators=(",", ":")))
PY
CURL_CMD=(curl -sS -o /dev/null -X POST -H "Content-Type: application/json" -H "Idempotency-Key: bench" \
    --data-binary "@$BODY_FILE" "http://127.0.0.1:$PORT$URL_PATH")
base=$(sink_lines)
log "curl ($RUNS runs, $TIMER)"
time_runs curl "$TMPROOT/curl.times" "${CURL_CMD[@]}"
check_phase "curl" "$base" "$((WARMUP + RUNS))" 0 >/dev/null
CURL_REQS=$((WARMUP + RUNS))

base=$(sink_lines)
log "apprise $APPRISE_HAVE ($RUNS runs, $TIMER)"
time_runs apprise "$TMPROOT/apprise.times" "${APPRISE_CMD[@]}"
check_phase "apprise" "$base" "$((WARMUP + RUNS))" 0 >/dev/null
APPRISE_REQS=$((WARMUP + RUNS))
TIMED_TOTAL=$(sink_lines)

# buzz and curl in turns (the order flipped every round), timed by one Python
# process around each spawn: on a VM whose speed drifts from second to second,
# two blocks of runs a minute apart compare two machines; turns compare the
# tools. The curl target is checked on these.
base=$(sink_lines)
log "buzz and curl in turns ($PAIRS rounds)"
python3 - "$PAIRS" "$TMPROOT/pairs.times" "${#BUZZ_CMD[@]}" "${BUZZ_CMD[@]}" "${CURL_CMD[@]}" <<'PY' || die "a run in turns failed"
import os, shutil, sys, tempfile, time
pairs, out, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
buzz, curl = sys.argv[4:4 + count], sys.argv[4 + count:]
err = tempfile.TemporaryFile()
# posix_spawn and waitpid, stdout to /dev/null and stderr to a file: no pipe
# to read, so the timer wakes once, when the child ends.
actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
def spawn(command):
    return os.posix_spawn(shutil.which(command[0]) or command[0], command, os.environ, file_actions=actions)
with open(out, "w") as times:
    for round in range(pairs):
        for name, command in ([("buzz", buzz), ("curl", curl)] if round % 2 == 0 else [("curl", curl), ("buzz", buzz)]):
            err.seek(0)
            err.truncate()
            start = time.perf_counter()
            _, status = os.waitpid(spawn(command), 0)
            took = (time.perf_counter() - start) * 1000
            if status != 0:
                err.seek(0)
                sys.stderr.write("%s failed (status %d): %s\n" % (name, status, err.read().decode(errors="replace")[:2000]))
                sys.exit(1)
            times.write("%s %d %.3f\n" % (name, round, took))
PY
check_phase "buzz and curl in turns" "$base" "$((2 * PAIRS))" 0 >/dev/null
awk '$1 == "buzz" { print $3 }' "$TMPROOT/pairs.times" >"$TMPROOT/pairs-buzz.times"
awk '$1 == "curl" { print $3 }' "$TMPROOT/pairs.times" >"$TMPROOT/pairs-curl.times"
# The ratio within each round, buzz over curl.
awk '{ t[$2, $1] = $3 } END { for (k in t) { split(k, p, SUBSEP); if (p[2] == "buzz") print t[p[1], "buzz"] / t[p[1], "curl"] } }' \
    "$TMPROOT/pairs.times" >"$TMPROOT/pairs-ratio.times"

# Peak RSS: one more run of each (two more requests, checked as well).
base=$(sink_lines)
log "peak RSS (one run each)"
BUZZ_RSS_KB=$(rss_kb "${BUZZ_CMD[@]}")
check_phase "buzz send (RSS run)" "$base" 1 1 >/dev/null
base=$(sink_lines)
APPRISE_RSS_KB=$(rss_kb "${APPRISE_CMD[@]}")
check_phase "apprise (RSS run)" "$base" 1 0 >/dev/null

CURL_RSS_KB=$(rss_kb "${CURL_CMD[@]}")

BUZZ_KEY_SAMPLE=$(awk -F'\t' 'NR == 1 { print $4 }' "$SINK_LOG")
BUZZ_UA=$(awk -F'\t' 'NR == 1 { print $5 }' "$SINK_LOG")
APPRISE_UA=$(awk -F'\t' -v n="$((BUZZ_REQS + CURL_REQS + 1))" 'NR == n { print $5 }' "$SINK_LOG")
APPRISE_BODY=$(awk -F'\t' -v n="$((BUZZ_REQS + CURL_REQS + 1))" 'NR == n { print $6 }' "$SINK_LOG")

read -r B_MED B_MIN B_MAX _ < <(stats "$TMPROOT/buzz.times")
read -r A_MED A_MIN A_MAX _ < <(stats "$TMPROOT/apprise.times")
read -r C_MED C_MIN C_MAX _ < <(stats "$TMPROOT/curl.times")
read -r PB_MED _ < <(stats "$TMPROOT/pairs-buzz.times")
read -r PC_MED _ < <(stats "$TMPROOT/pairs-curl.times")
read -r PR_MED _ < <(stats "$TMPROOT/pairs-ratio.times")

# ---------------------------------------------------------------- report
{
    echo
    echo "BirthdayBuzz send benchmark  ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r))"
    echo "load average before the runs: $LOADAVG (other builds running skew the figures)"
    echo "buzz: $BUZZ ($BUZZ_BYTES bytes, $BUZZ_LINK)"
    echo "apprise: $APPRISE_HAVE, $("$VENV/bin/python" -c 'import platform; print("Python", platform.python_version())')"
    echo "sink: $SINK_DESC, http://127.0.0.1:$PORT$URL_PATH"
    echo "timer: $TIMER, $RUNS timed runs each after $WARMUP untimed warm-up runs; message \"$MESSAGE\""
    echo "  buzz --config FILE send --channel hook \"$MESSAGE\""
    echo "  apprise -b \"$MESSAGE\" json://127.0.0.1:$PORT$URL_PATH"
    echo "sink received: buzz $BUZZ_REQS, apprise $APPRISE_REQS ($TIMED_TOTAL with the warm-ups; +1 each for the RSS runs), all POST $URL_PATH -> 200"
    echo "  buzz: Idempotency-Key on every request, all distinct (e.g. $BUZZ_KEY_SAMPLE); User-Agent $BUZZ_UA; body $BUZZ_BODY bytes"
    echo "  apprise: User-Agent $APPRISE_UA; body $APPRISE_BODY bytes"
    echo "buzz runs (ms): $(tr '\n' ' ' <"$TMPROOT/buzz.times")"
    echo "curl runs (ms): $(tr '\n' ' ' <"$TMPROOT/curl.times")"
    echo "apprise runs (ms): $(tr '\n' ' ' <"$TMPROOT/apprise.times")"
    echo
    awk -v bm="$B_MED" -v bn="$B_MIN" -v bx="$B_MAX" -v br="$BUZZ_RSS_KB" \
        -v am="$A_MED" -v an="$A_MIN" -v ax="$A_MAX" -v ar="$APPRISE_RSS_KB" \
        -v cm="$C_MED" -v cn="$C_MIN" -v cx="$C_MAX" -v cr="$CURL_RSS_KB" -v tc="$TARGET_CURL" \
        -v tms="$TARGET_MS" -v tr="$TARGET_RATIO" -v pb="$PB_MED" -v pc="$PC_MED" -v pr="$PR_MED" -v pairs="$PAIRS" '
    function verdict(ok) { return ok ? "PASS" : "FAIL" }
    BEGIN {
        printf "%-22s %10s %10s %10s %14s\n", "wall time (ms)", "median", "min", "max", "peak RSS MB"
        printf "%-22s %10.2f %10.2f %10.2f %14.1f\n", "buzz send", bm, bn, bx, br / 1024
        printf "%-22s %10.2f %10.2f %10.2f %14.1f\n", "curl (same body)", cm, cn, cx, cr / 1024
        printf "%-22s %10.2f %10.2f %10.2f %14.1f\n", "apprise json://", am, an, ax, ar / 1024
        printf "in turns, %d rounds: buzz median %.2f ms, curl median %.2f ms; median of the rounds'"'"' ratios %.2fx\n", pairs, pb, pc, pr
        print ""
        r = bm > 0 ? am / bm : 1e9
        printf "%-34s %10s %10s  %s\n", "check", "value", "target", "result"
        printf "%-34s %8.2fms %10s  %s\n", "buzz send median", bm, "<= " tms " ms", verdict(bm <= tms)
        printf "%-34s %9.1fx %10s  %s\n", "apprise median / buzz median", r, ">= " tr "x", verdict(r >= tr)
        c = pc > 0 ? pb / pc : 1e9
        printf "%-34s %9.2fx %10s  %s\n", "buzz / curl, in turns (medians)", c, "<= " tc "x", verdict(c <= tc)
        blocks = cm > 0 ? bm / cm : 1e9
        printf "%-34s %9.2fx\n", "(in blocks: buzz / curl medians)", blocks
        printf "%-34s %8.1fMB\n", "buzz send peak RSS (one send)", br / 1024
    }'
} | tee "$REPORT"
log "report saved to $REPORT"
exit 0
