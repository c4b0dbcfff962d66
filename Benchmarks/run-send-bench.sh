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
ROOT=$(dirname "$HERE")
OUT=$HERE/out

RUNS=${BENCH_RUNS:-10}
SINK=${BENCH_SINK:-auto}                   # auto | nginx | python
TIMER=${BENCH_TIMER:-auto}                 # auto | hyperfine | bash
MESSAGE=${BENCH_MESSAGE:-hello}
APPRISE_SPEC=${APPRISE_SPEC:-apprise==2.2.0}
BUZZ_SCRATCH=${BUZZ_SCRATCH:-$ROOT/.build-static}
TARGET_MS=${BENCH_TARGET_MS:-20}           # buzz median must be <= this
TARGET_RATIO=${BENCH_TARGET_RATIO:-30}     # apprise median / buzz median must be >= this
VENV=$OUT/send-venv
REPORT=$OUT/last-send-report.txt

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'run-send-bench: %s\n' "$*" >&2; exit 1; }

case $SINK in auto | nginx | python) ;; *) die "BENCH_SINK must be auto, nginx or python (got $SINK)" ;; esac
case $TIMER in auto | hyperfine | bash) ;; *) die "BENCH_TIMER must be auto, hyperfine or bash (got $TIMER)" ;; esac
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer (got $RUNS)"

mkdir -p "$OUT"

# ---------------------------------------------------------------- tools
SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi
apt_updated=0
apt_install() {
    if [ "$apt_updated" -eq 0 ]; then
        "${SUDO[@]}" apt-get update -qq || return 1
        apt_updated=1
    fi
    # Debian's postinst would start nginx as a system service; a policy-rc.d
    # (as in containers) prevents that, otherwise the service is simply left
    # running on port 80 and does not affect this benchmark.
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

find_nginx() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true; }

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

if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv $VENV"
    if ! python3 -m venv "$VENV"; then
        rm -rf "$VENV"
        apt_install python3-venv
        python3 -m venv "$VENV"
    fi
fi
APPRISE_WANT=${APPRISE_SPEC#*==}
APPRISE_HAVE=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("apprise"))' 2>/dev/null || true)
if [ -z "$APPRISE_HAVE" ] || { [ "$APPRISE_WANT" != "$APPRISE_SPEC" ] && [ "$APPRISE_HAVE" != "$APPRISE_WANT" ]; }; then
    log "installing $APPRISE_SPEC into $VENV (pip)"
    "$VENV/bin/python" -m pip install -q "$APPRISE_SPEC"
    APPRISE_HAVE=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("apprise"))')
fi
APPRISE=$VENV/bin/apprise
[ -x "$APPRISE" ] || die "apprise not found at $APPRISE"

# ---------------------------------------------------------------- buzz
if [ -n "${BUZZ_BIN:-}" ]; then
    BUZZ=$BUZZ_BIN
    log "using prebuilt buzz: $BUZZ"
else
    build_args=(-c release --static-swift-stdlib --scratch-path "$BUZZ_SCRATCH")
    log "swift build ${build_args[*]} --product buzz (the first static build takes a few minutes)"
    (cd "$ROOT" && swift build "${build_args[@]}" --product buzz)
    BUZZ=$(cd "$ROOT" && swift build "${build_args[@]}" --show-bin-path)/buzz
fi
[ -x "$BUZZ" ] || die "buzz binary not found at $BUZZ"
BUZZ_BYTES=$(stat -L -c %s "$BUZZ")
if [ "$(head -c 4 "$BUZZ" | od -An -c | tr -d ' ')" != '177ELF' ]; then
    BUZZ_LINK="not an ELF binary"
elif ldd "$BUZZ" 2>/dev/null | grep -q 'libswiftCore'; then
    BUZZ_LINK="links libswiftCore dynamically (not the static-stdlib install form)"
else
    BUZZ_LINK="static Swift stdlib"
fi

# ---------------------------------------------------------------- temp dirs
TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/buzz-send-bench.XXXXXX")
SINK_PID=""
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
    if [ -n "$SINK_PID" ] && kill -0 "$SINK_PID" 2>/dev/null; then
        kill -TERM "$SINK_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SINK_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ "${BENCH_KEEP:-0}" = 1 ]; then log "kept $TMPROOT"; else rm -rf "$TMPROOT"; fi
}
trap cleanup EXIT
mkdir -p "$TMPROOT/xdg-config" "$TMPROOT/xdg-data" "$TMPROOT/xdg-cache" "$TMPROOT/home" "$TMPROOT/sink"
SINK_LOG=$TMPROOT/sink/requests.log
: >"$SINK_LOG"

# ---------------------------------------------------------------- sink
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [ "$SINK" = nginx ]; then
    PORT=$(free_port)
    NGINX_DIR=$TMPROOT/sink/nginx
    mkdir -p "$NGINX_DIR"
    USER_LINE=""
    # As root the workers would switch to "nobody"; keep them as the caller.
    if [ "$(id -u)" -eq 0 ]; then USER_LINE="user $(id -un) $(id -gn);"; fi
    cat >"$NGINX_DIR/nginx.conf" <<EOF
$USER_LINE
worker_processes 1;
daemon off;
master_process on;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 64; }
http {
    log_format bench '\$request_method\t\$uri\t\$status\t\$http_idempotency_key\t\$http_user_agent\t\$content_length';
    access_log $SINK_LOG bench;
    client_body_temp_path $NGINX_DIR/body;
    proxy_temp_path $NGINX_DIR/proxy;
    fastcgi_temp_path $NGINX_DIR/fastcgi;
    uwsgi_temp_path $NGINX_DIR/uwsgi;
    scgi_temp_path $NGINX_DIR/scgi;
    keepalive_timeout 30s;
    tcp_nodelay on;
    server {
        listen 127.0.0.1:$PORT;
        location / {
            default_type text/plain;
            return 200 "ok";
        }
    }
}
EOF
    "$NGINX" -t -q -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" 2>"$NGINX_DIR/test.err" \
        || { cat "$NGINX_DIR/test.err" >&2; die "nginx rejected its config"; }
    "$NGINX" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" 2>>"$NGINX_DIR/error.log" &
    SINK_PID=$!
    SINK_DESC="nginx $("$NGINX" -v 2>&1 | sed 's|.*nginx/||'), 1 worker, return 200"
else
    "$VENV/bin/python" "$HERE/send_sink.py" "$SINK_LOG" "$TMPROOT/sink/port" 900 &
    SINK_PID=$!
    for _ in $(seq 100); do [ -s "$TMPROOT/sink/port" ] && break; sleep 0.05; done
    [ -s "$TMPROOT/sink/port" ] || die "the Python sink did not start"
    PORT=$(cat "$TMPROOT/sink/port")
    SINK_DESC="Python ThreadingHTTPServer (send_sink.py), HTTP/1.1, TCP_NODELAY"
fi
for _ in $(seq 100); do port_open "$PORT" && break; kill -0 "$SINK_PID" 2>/dev/null || break; sleep 0.05; done
port_open "$PORT" || die "the sink is not listening on 127.0.0.1:$PORT"
URL_PATH=/hook
log "sink: $SINK_DESC on 127.0.0.1:$PORT"

# The sink logs one line per request: METHOD PATH STATUS IDEMPOTENCY-KEY UA BODY-BYTES
sink_lines() { wc -l <"$SINK_LOG" | tr -d ' '; }
# wait_sink N: wait (up to 2 s) until the log has N lines; nginx logs after answering.
wait_sink() {
    for _ in $(seq 40); do [ "$(sink_lines)" -ge "$1" ] && break; sleep 0.05; done
    sleep 0.1
}
# check_phase NAME FROM COUNT NEED_KEY: lines FROM+1 .. FROM+COUNT must be exactly
# COUNT POSTs to URL_PATH answered 200; with NEED_KEY=1 each has a distinct Idempotency-Key.
check_phase() {
    local name=$1 from=$2 count=$3 need_key=$4 total
    wait_sink $((from + count))
    total=$(sink_lines)
    [ "$total" -eq $((from + count)) ] \
        || die "$name: the sink received $((total - from)) requests, expected $count"
    tail -n +"$((from + 1))" "$SINK_LOG" | awk -F'\t' -v name="$name" -v path="$URL_PATH" -v need="$need_key" '
        $1 != "POST" || $2 != path || $3 != "200" { printf "%s: unexpected request: %s\n", name, $0 > "/dev/stderr"; bad = 1 }
        need == 1 && ($4 == "-" || $4 == "") { printf "%s: request without Idempotency-Key: %s\n", name, $0 > "/dev/stderr"; bad = 1 }
        need == 1 && ($4 in seen) { printf "%s: repeated Idempotency-Key %s\n", name, $4 > "/dev/stderr"; bad = 1 }
        { seen[$4] = 1 }
        END { exit bad }' || die "$name: the sink log is not as expected (see above)"
}

# ---------------------------------------------------------------- buzz config
CONFIG=$TMPROOT/config.toml
cat >"$CONFIG" <<EOF
[channels.hook]
type = "webhook"
url = "http://127.0.0.1:$PORT$URL_PATH"
EOF
export XDG_CONFIG_HOME=$TMPROOT/xdg-config XDG_DATA_HOME=$TMPROOT/xdg-data XDG_CACHE_HOME=$TMPROOT/xdg-cache
# Apprise keeps persistent storage under ~/.local/share/apprise unless told;
# a fresh HOME keeps the user's apprise config and cache out of the runs.
export HOME=$TMPROOT/home
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

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
        hyperfine -N --runs "$RUNS" --style basic --time-unit millisecond \
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
check_phase "buzz send" "$base" "$RUNS" 1
BUZZ_REQS=$RUNS

base=$(sink_lines)
log "apprise $APPRISE_HAVE ($RUNS runs, $TIMER)"
time_runs apprise "$TMPROOT/apprise.times" "${APPRISE_CMD[@]}"
check_phase "apprise" "$base" "$RUNS" 0
APPRISE_REQS=$RUNS
TIMED_TOTAL=$(sink_lines)

# Peak RSS: one more run of each (two more requests, checked as well).
base=$(sink_lines)
log "peak RSS (one run each)"
BUZZ_RSS_KB=$(rss_kb "${BUZZ_CMD[@]}")
check_phase "buzz send (RSS run)" "$base" 1 1
base=$(sink_lines)
APPRISE_RSS_KB=$(rss_kb "${APPRISE_CMD[@]}")
check_phase "apprise (RSS run)" "$base" 1 0

BUZZ_KEY_SAMPLE=$(awk -F'\t' 'NR == 1 { print $4 }' "$SINK_LOG")
BUZZ_UA=$(awk -F'\t' 'NR == 1 { print $5 }' "$SINK_LOG")
BUZZ_BODY=$(awk -F'\t' 'NR == 1 { print $6 }' "$SINK_LOG")
APPRISE_UA=$(awk -F'\t' -v n="$((BUZZ_REQS + 1))" 'NR == n { print $5 }' "$SINK_LOG")
APPRISE_BODY=$(awk -F'\t' -v n="$((BUZZ_REQS + 1))" 'NR == n { print $6 }' "$SINK_LOG")

read -r B_MED B_MIN B_MAX _ < <(stats "$TMPROOT/buzz.times")
read -r A_MED A_MIN A_MAX _ < <(stats "$TMPROOT/apprise.times")

# ---------------------------------------------------------------- report
{
    echo
    echo "BirthdayBuzz send benchmark  ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r))"
    echo "load average before the runs: $LOADAVG (other builds running skew the figures)"
    echo "buzz: $BUZZ ($BUZZ_BYTES bytes, $BUZZ_LINK)"
    echo "apprise: $APPRISE_HAVE, $("$VENV/bin/python" -c 'import platform; print("Python", platform.python_version())')"
    echo "sink: $SINK_DESC, http://127.0.0.1:$PORT$URL_PATH"
    echo "timer: $TIMER, $RUNS runs each, no warm-up; message \"$MESSAGE\""
    echo "  buzz --config FILE send --channel hook \"$MESSAGE\""
    echo "  apprise -b \"$MESSAGE\" json://127.0.0.1:$PORT$URL_PATH"
    echo "sink received: buzz $BUZZ_REQS, apprise $APPRISE_REQS ($TIMED_TOTAL timed in all; +1 each for the RSS runs), all POST $URL_PATH -> 200"
    echo "  buzz: Idempotency-Key on every request, all distinct (e.g. $BUZZ_KEY_SAMPLE); User-Agent $BUZZ_UA; body $BUZZ_BODY bytes"
    echo "  apprise: User-Agent $APPRISE_UA; body $APPRISE_BODY bytes"
    echo "buzz runs (ms): $(tr '\n' ' ' <"$TMPROOT/buzz.times")"
    echo "apprise runs (ms): $(tr '\n' ' ' <"$TMPROOT/apprise.times")"
    echo
    awk -v bm="$B_MED" -v bn="$B_MIN" -v bx="$B_MAX" -v br="$BUZZ_RSS_KB" \
        -v am="$A_MED" -v an="$A_MIN" -v ax="$A_MAX" -v ar="$APPRISE_RSS_KB" \
        -v tms="$TARGET_MS" -v tr="$TARGET_RATIO" '
    function verdict(ok) { return ok ? "PASS" : "FAIL" }
    BEGIN {
        printf "%-22s %10s %10s %10s %14s\n", "wall time (ms)", "median", "min", "max", "peak RSS MB"
        printf "%-22s %10.2f %10.2f %10.2f %14.1f\n", "buzz send", bm, bn, bx, br / 1024
        printf "%-22s %10.2f %10.2f %10.2f %14.1f\n", "apprise json://", am, an, ax, ar / 1024
        print ""
        r = bm > 0 ? am / bm : 1e9
        printf "%-34s %10s %10s  %s\n", "check", "value", "target", "result"
        printf "%-34s %8.2fms %10s  %s\n", "buzz send median", bm, "<= " tms " ms", verdict(bm <= tms)
        printf "%-34s %9.1fx %10s  %s\n", "apprise median / buzz median", r, ">= " tr "x", verdict(r >= tr)
        printf "%-34s %8.1fMB\n", "buzz send peak RSS (one send)", br / 1024
    }'
} | tee "$REPORT"
log "report saved to $REPORT"
exit 0
