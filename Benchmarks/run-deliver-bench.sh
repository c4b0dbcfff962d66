#!/usr/bin/env bash
# Delivery benchmark: 10,000 day-of reminders due at once, delivered by one
# `buzz tick` to a loopback nginx webhook sink (ledger included), beside `wrk`
# on one keep-alive connection to the same sink and beside Apprise (the Python
# library) sending the same notifications from one process.
# Run by hand: bash Benchmarks/run-deliver-bench.sh   (never part of `swift test`)
# See Benchmarks/README.md ("Delivery benchmark") for what is measured and the knobs.
#
# Exits 0 whether the targets pass or fail (it is a report); exits nonzero only
# if a setup step or a measured command fails, or the sink did not receive
# exactly the requests it should have.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG='run-deliver-bench'
# shellcheck source=lib.sh
. "$HERE/lib.sh"

N=${BENCH_N:-10000}                          # reminders due at once
RUNS=${BENCH_RUNS:-3}                        # measured ticks (each delivers N)
EMPTY_RUNS=${BENCH_EMPTY_RUNS:-5}            # empty ticks (start-up + planning only)
WRK_SECONDS=${BENCH_WRK_SECONDS:-5}
APPRISE_N=${BENCH_APPRISE_N:-10000}
PERF=${BENCH_PERF:-0}                        # 1: one more tick under perf record -g
APPRISE_SPEC=${APPRISE_SPEC:-apprise==2.2.0}
BUZZ_SCRATCH=${BUZZ_SCRATCH:-$ROOT/.build-static}
TARGET_WRK=${BENCH_TARGET_WRK:-0.75}         # buzz rate / wrk rate must be >= this (issue 23)
TARGET_APPRISE=${BENCH_TARGET_APPRISE:-40}   # buzz rate / apprise rate must be >= this
VENV=$OUT/send-venv                          # shared with run-send-bench.sh
REPORT=$OUT/last-deliver-report.txt
PERF_REPORT=$OUT/last-deliver-perf.txt

# The reminders: everyone born on 03-15; the measured tick runs 30 s after the
# 09:00 delivery time, the empty tick 30 s before it.
IMPORT_NOW=2027-01-01
WATERMARK_NOW=2027-01-02T00:00Z
TICK_NOW=2027-03-15T09:00:30Z
EMPTY_NOW=2027-03-15T08:59:30Z

posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer (got $2)"; }
posint BENCH_N "$N"
posint BENCH_RUNS "$RUNS"
posint BENCH_EMPTY_RUNS "$EMPTY_RUNS"
posint BENCH_WRK_SECONDS "$WRK_SECONDS"
posint BENCH_APPRISE_N "$APPRISE_N"
case $PERF in 0 | 1) ;; *) die "BENCH_PERF must be 0 or 1 (got $PERF)" ;; esac

mkdir -p "$OUT"

# ---------------------------------------------------------------- tools
need=()
[ -x /usr/bin/time ] || need+=(time)
[ -n "$(find_nginx)" ] || need+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
if [ "$PERF" = 1 ] && ! command -v perf >/dev/null 2>&1; then need+=(linux-perf); fi
if [ "${#need[@]}" -gt 0 ]; then
    log "installing ${need[*]} (apt-get)"
    apt_install "${need[@]}" || die "could not install ${need[*]}"
fi
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is missing"
NGINX=$(find_nginx)
[ -n "$NGINX" ] || die "nginx is missing"
command -v wrk >/dev/null 2>&1 || die "wrk is missing"
[ "$PERF" = 0 ] || command -v perf >/dev/null 2>&1 || die "perf is missing"

make_venv "$VENV"
ensure_apprise "$VENV" "$APPRISE_SPEC"

# ---------------------------------------------------------------- buzz
build_buzz " (the first static build takes a few minutes)" \
    -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld --scratch-path "$BUZZ_SCRATCH"
BUZZ_BYTES=$(stat -L -c %s "$BUZZ")

# ---------------------------------------------------------------- temp dirs
make_tmproot buzz-deliver-bench
mkdir -p "$TMPROOT/xdg-config" "$TMPROOT/xdg-cache" "$TMPROOT/home"
new_sink_log

# ---------------------------------------------------------------- sink
# keepalive_requests: nginx closes a keep-alive connection after 1000 requests
# by default; raised so that one connection can carry a whole tick (and wrk).
# The access log is buffered (flushed every 100 ms), the same for every client,
# so wait_sink waits up to 3 s for it, then 0.25 s more.
start_nginx_sink " buffer=64k flush=100ms" "keepalive_timeout 60s;" "keepalive_requests 10000000;"
SINK_DESC="$SINK_DESC, keepalive_requests 10M, access log buffered"
SINK_WAIT_STEPS=60
SINK_SETTLE=0.25
sink_ready
URL=http://127.0.0.1:$PORT$URL_PATH

# ---------------------------------------------------------------- data
isolate_env
unset BUZZ_DATA_DIR

CONFIG=$TMPROOT/config.toml
cat >"$CONFIG" <<EOF
[general]
timezone = "UTC"
locale = "en"

[reminders]
channels = ["hook"]
offsets = [0]

[channels.hook]
type = "webhook"
url = "$URL"
EOF
chmod 600 "$CONFIG"

CARDS=$TMPROOT/contacts.vcf
awk -v n="$N" 'BEGIN {
    for (i = 0; i < n; i++)
        printf "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u%d\r\nFN:Person %d\r\nN:%d;Person;;;\r\nBDAY:1990-03-15\r\nEND:VCARD\r\n", i, i, i
}' >"$CARDS"

# run_buzz NAME OUTFILE CMD...: one run with its output kept; dies if it fails.
run_buzz() {
    local name=$1 out=$2 rc=0; shift 2
    "$@" >"$out" 2>"$out.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        printf 'run-deliver-bench: %s failed (exit %s): %s\n' "$name" "$rc" "$*" >&2
        cat "$out" "$out.err" | sed 's/^/  | /' | head -n 30 >&2
        exit 1
    fi
}

TEMPLATE=$TMPROOT/data-template
mkdir -p "$TEMPLATE"
log "import $N contacts, then an empty tick at $WATERMARK_NOW (sets the dispatch watermark)"
run_buzz import "$TMPROOT/import.out" "$BUZZ" --config "$CONFIG" --data-dir "$TEMPLATE" import "$CARDS" --now "$IMPORT_NOW"
run_buzz "watermark tick" "$TMPROOT/watermark.out" "$BUZZ" --config "$CONFIG" --data-dir "$TEMPLATE" tick --now "$WATERMARK_NOW" --json
[ "$(sink_lines)" -eq 0 ] || die "the watermark tick sent something"

# tick_json_check FILE WANT_DUE WANT_SENT: the tick's JSON must have these counts and no failures.
tick_json_check() {
    python3 - "$@" <<'PY'
import json, sys
path, due, sent = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    r = json.load(open(path))
except ValueError as e:
    sys.exit("tick printed no JSON object (%s)" % e)
problems = []
if r.get("due") != due: problems.append("due %r, expected %d" % (r.get("due"), due))
if r.get("sent") != sent: problems.append("sent %r, expected %d" % (r.get("sent"), sent))
for k in ("failed", "retrying", "missed"):
    if r.get(k): problems.append("%s %r" % (k, r.get(k)))
if len(r.get("deliveries", [])) != sent and sent:
    problems.append("%d deliveries listed" % len(r.get("deliveries", [])))
if problems: sys.exit("tick JSON: " + "; ".join(problems))
PY
}

# ---------------------------------------------------------------- measuring
# timed_tick NAME NOW: a fresh copy of the template data dir, then one tick at
# NOW under /usr/bin/time; sets T_MS (wall, EPOCHREALTIME), RSS_KB and CPU_MS
# (user + system).
timed_tick() {
    local name=$1 now=$2 dir=$TMPROOT/data-run rc=0 t0 t1
    rm -rf "$dir"
    cp -a "$TEMPLATE" "$dir"
    sync -f "$dir" 2>/dev/null || true
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M %U %S' -o "$TMPROOT/rss.out" \
        "$BUZZ" --config "$CONFIG" --data-dir "$dir" tick --now "$now" --json >"$TMPROOT/tick.json" 2>"$TMPROOT/tick.err" || rc=$?
    t1=$EPOCHREALTIME
    if [ "$rc" -ne 0 ]; then
        printf 'run-deliver-bench: %s failed (exit %s)\n' "$name" "$rc" >&2
        { head -c 2000 "$TMPROOT/tick.json"; echo; cat "$TMPROOT/tick.err"; } | sed 's/^/  | /' | head -n 30 >&2
        exit 1
    fi
    T_MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
    read -r RSS_KB cpu_u cpu_s < <(tail -n 1 "$TMPROOT/rss.out")
    CPU_MS=$(awk -v u="$cpu_u" -v s="$cpu_s" 'BEGIN { printf "%.0f", (u + s) * 1000 }')
}

# run_wrk NAME: wrk on one connection; appends req/s to $TMPROOT/wrk.rates.
WRK_LUA=$TMPROOT/post.lua
cat >"$WRK_LUA" <<'EOF'
-- A POST like one of buzz's (the generic webhook body, ~300 bytes).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Idempotency-Key"] = "reminder:u1234:2027-03-15:0:hook"
wrk.body = '{"event":"reminder","id":"reminder:u1234:2027-03-15:0","title":"It\'s Person 1234\'s birthday today",' ..
  '"body":"Person turns 37 today, March 15, 2027.\\nA quick call or a few kind words will make their day.",' ..
  '"contact":{"id":"u1234","name":"Person 1234"},"occurrence":"2027-03-15","days_until":0,"locale":"en"}'
EOF
WRK_BODY_BYTES=$(lua_body() { sed -n "s/^wrk.body = '//p;s/^  '//p" "$WRK_LUA"; }; echo "(~$(lua_body | tr -d '\n' | wc -c) chars)")
run_wrk() {
    local name=$1 base rc=0 reqs rate conns
    base=$(sink_lines)
    wrk -t1 -c1 -d"${WRK_SECONDS}s" -s "$WRK_LUA" "$URL" >"$TMPROOT/$name.out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        sed 's/^/  | /' "$TMPROOT/$name.out" >&2
        die "$name failed (exit $rc)"
    fi
    reqs=$(awk '/requests in/ { print $1 }' "$TMPROOT/$name.out")
    rate=$(awk '/^Requests\/sec:/ { print $2 }' "$TMPROOT/$name.out")
    if [ -z "$reqs" ] || [ -z "$rate" ]; then
        sed 's/^/  | /' "$TMPROOT/$name.out" >&2
        die "$name: cannot read wrk's output"
    fi
    grep -q 'Non-2xx\|Socket errors' "$TMPROOT/$name.out" && { sed 's/^/  | /' "$TMPROOT/$name.out" >&2; die "$name: wrk saw errors"; }
    # wrk counts completed responses; the request in flight at the end may be logged too.
    wait_sink $((base + reqs))
    local got=$(($(sink_lines) - base))
    [ "$got" -eq "$reqs" ] || [ "$got" -eq $((reqs + 1)) ] || die "$name: wrk reported $reqs requests, the sink logged $got"
    conns=$(check_phase "$name" "$base" "$got" 0)
    printf '%s %s %s\n' "$rate" "$reqs" "$conns" >>"$TMPROOT/wrk.rates"
    log "$name: $rate req/s ($reqs requests, $conns connection(s))"
}

LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$BUZZ" >/dev/null
: >"$TMPROOT/wrk.rates"
: >"$TMPROOT/tick.times"
: >"$TMPROOT/empty.times"

# run_floor NAME COMMIT: deliver_floor.c, N POSTs (with the commit per send or
# without); appends "seconds" to $TMPROOT/NAME.times.
FLOOR_BIN=$TMPROOT/deliver_floor
${CC:-cc} -O2 -o "$FLOOR_BIN" "$HERE/deliver_floor.c" -lcurl -lsqlite3 2>"$TMPROOT/floor-cc.err" \
    || { sed 's/^/  | /' "$TMPROOT/floor-cc.err" >&2; die "cannot build deliver_floor.c (needs cc, libcurl and SQLite headers)"; }
run_floor() {
    local name=$1 commit=$2 base out
    base=$(sink_lines)
    rm -f "$TMPROOT/floor.db" "$TMPROOT/floor.db-wal" "$TMPROOT/floor.db-shm"
    out=$("$FLOOR_BIN" "$URL" "$N" "$TMPROOT/floor.db" 500 "$commit") || die "$name failed"
    check_phase "$name" "$base" "$N" 0 >/dev/null
    echo "$out" | awk '{ print $2 }' >>"$TMPROOT/$name.times"
    log "$name: $out"
}

run_wrk wrk-1
run_floor floor 1
run_floor floor-nocommit 0

log "buzz tick: $N reminders due, $RUNS runs (each from a fresh copy of the data dir)"
TICK_CONNS=""
for ((i = 1; i <= RUNS; i++)); do
    base=$(sink_lines)
    timed_tick "tick $i" "$TICK_NOW"
    tick_json_check "$TMPROOT/tick.json" "$N" "$N" || die "tick $i: the JSON report is not as expected"
    conns=$(check_phase "tick $i" "$base" "$N" 1)
    TICK_CONNS="$TICK_CONNS $conns"
    printf '%s %s %s\n' "$T_MS" "$RSS_KB" "$CPU_MS" >>"$TMPROOT/tick.times"
    log "tick $i: $T_MS ms (CPU $CPU_MS ms), peak RSS $RSS_KB KiB, $conns connection(s)"
done
BUZZ_KEY_SAMPLE=$(awk -F'\t' 'NR == base + 1 { print $4 }' base="$base" "$SINK_LOG")
BUZZ_UA=$(awk -F'\t' 'NR == base + 1 { print $5 }' base="$base" "$SINK_LOG")
BUZZ_BODY=$(awk -F'\t' 'NR == base + 1 { print $6 }' base="$base" "$SINK_LOG")

run_wrk wrk-2
run_floor floor 1
run_floor floor-nocommit 0

log "empty tick ($EMPTY_RUNS runs at $EMPTY_NOW: planning $N contacts, nothing due)"
for ((i = 1; i <= EMPTY_RUNS; i++)); do
    base=$(sink_lines)
    timed_tick "empty tick $i" "$EMPTY_NOW"
    tick_json_check "$TMPROOT/tick.json" 0 0 || die "empty tick $i: the JSON report is not as expected"
    wait_sink "$base"
    [ "$(sink_lines)" -eq "$base" ] || die "empty tick $i sent something"
    printf '%s %s %s\n' "$T_MS" "$RSS_KB" "$CPU_MS" >>"$TMPROOT/empty.times"
done

log "apprise $APPRISE_HAVE: $APPRISE_N notifications (library, one process)"
base=$(sink_lines)
rc=0
"$VENV/bin/python" "$HERE/deliver_apprise.py" "json://127.0.0.1:$PORT$URL_PATH" "$APPRISE_N" \
    >"$TMPROOT/apprise.out" 2>"$TMPROOT/apprise.err" || rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$TMPROOT/apprise.out" "$TMPROOT/apprise.err" | sed 's/^/  | /' | tail -n 30 >&2
    die "apprise failed (exit $rc)"
fi
read -r _ _ APPRISE_SECONDS <"$TMPROOT/apprise.out"
APPRISE_CONNS=$(check_phase apprise "$base" "$APPRISE_N" 0)
APPRISE_UA=$(awk -F'\t' 'NR == base + 1 { print $5 }' base="$base" "$SINK_LOG")
APPRISE_BODY=$(awk -F'\t' 'NR == base + 1 { print $6 }' base="$base" "$SINK_LOG")

if [ "$PERF" = 1 ]; then
    log "perf record -g of one more tick -> $PERF_REPORT"
    base=$(sink_lines)
    dir=$TMPROOT/data-run
    rm -rf "$dir"; cp -a "$TEMPLATE" "$dir"
    rc=0
    PERF_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
    t0=$EPOCHREALTIME
    perf record -q -g -F 2000 -o "$TMPROOT/perf.data" -- \
        "$BUZZ" --config "$CONFIG" --data-dir "$dir" tick --now "$TICK_NOW" --json \
        >"$TMPROOT/tick.json" 2>"$TMPROOT/perf.err" || rc=$?
    t1=$EPOCHREALTIME
    [ "$rc" -eq 0 ] || { sed 's/^/  | /' "$TMPROOT/perf.err" | tail -n 20 >&2; die "perf tick failed (exit $rc)"; }
    PERF_MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
    tick_json_check "$TMPROOT/tick.json" "$N" "$N" || die "perf tick: the JSON report is not as expected"
    check_phase "perf tick" "$base" "$N" 1 >/dev/null
    # perf_top SORT CHILDREN LINES: one flat perf report, without headers and the
    # empty trailing columns; `head` closing the pipe early is not a failure.
    perf_top() {
        local raw=$TMPROOT/perf-report.txt prc=0
        perf report -i "$TMPROOT/perf.data" "--$2" --sort "$1" --stdio -g none --percent-limit 0.3 \
            >"$raw" 2>"$raw.err" || prc=$?
        if ! grep -q '%' "$raw"; then
            echo "(perf report --sort $1 --$2 gave nothing: exit $prc; $(head -c 300 "$raw.err" | tr '\n' ' '))"
            return 0
        fi
        grep -v '^#' "$raw" | grep -v '^$' | sed 's/[[:space:]]*-[[:space:]]*-[[:space:]]*$//' | cut -c1-160 \
            | head -n "$3" || true
    }
    {
        echo "perf record -g -F 2000 of one buzz tick delivering $N ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
        echo "wall $PERF_MS ms; load average before: $PERF_LOAD"
        echo
        echo "## self time by thread (comm)"
        perf_top comm no-children 10
        echo
        echo "## self time by shared object"
        perf_top dso no-children 10
        echo
        echo "## self time by symbol"
        perf_top dso,symbol no-children 40
        echo
        echo "## selected frames, inclusive (children)"
        perf report -i "$TMPROOT/perf.data" --children --sort symbol --stdio -g none 2>/dev/null | grep -v '^#' \
            | grep -E 'DispatcherC7deliver|renderReminder|MessageTemplatesV6format|DateFormatterC6string|Mustache0A8TemplateV6render_|trimmingCharacters2in|WebhookChannelV7deliver|GenericPayloadO4json|CurlSupport0A7SessionC4http|SQLiteLedger|plannableContacts|PlannerV3due|\] do_futex|__x64_sys_fcntl|__x64_sys_pwrite64|__x64_sys_sendto|__x64_sys_recvfrom|__x64_sys_poll' \
            | sed 's/[[:space:]]*-[[:space:]]*-[[:space:]]*$//' | cut -c1-160 | head -n 40 || true
        echo
        echo "## inclusive time by symbol (children)"
        perf_top symbol children 60
    } >"$PERF_REPORT"
fi

# ---------------------------------------------------------------- report
# stats FILE -> "median min max" of column 1
stats() {
    cut -d' ' -f1 "$1" | sort -g | awk '{ v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'
}
read -r T_MED T_MIN T_MAX < <(stats "$TMPROOT/tick.times")
read -r E_MED E_MIN E_MAX < <(stats "$TMPROOT/empty.times")
T_RSS=$(awk '$2 > m { m = $2 } END { print m }' "$TMPROOT/tick.times")
E_RSS=$(awk '$2 > m { m = $2 } END { print m }' "$TMPROOT/empty.times")
T_CPU=$(cut -d' ' -f3 "$TMPROOT/tick.times" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
E_CPU=$(cut -d' ' -f3 "$TMPROOT/empty.times" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
WRK_MEAN=$(awk '{ s += $1 } END { printf "%.2f", s / NR }' "$TMPROOT/wrk.rates")
# The floors' rates: N / the mean of their runs.
FLOOR_RATE=$(awk -v n="$N" '{ s += $1 } END { printf "%.2f", n / (s / NR) }' "$TMPROOT/floor.times")
FLOOR_BARE_RATE=$(awk -v n="$N" '{ s += $1 } END { printf "%.2f", n / (s / NR) }' "$TMPROOT/floor-nocommit.times")

{
    echo
    echo "BirthdayBuzz delivery benchmark  ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r))"
    echo "load average before the runs: $LOADAVG (other builds running skew the figures)"
    echo "buzz: $BUZZ ($BUZZ_BYTES bytes)"
    echo "apprise: $APPRISE_HAVE, $("$VENV/bin/python" -c 'import platform; print("Python", platform.python_version())'); wrk: $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
    echo "sink: $SINK_DESC, $URL"
    echo "buzz tick: $N contacts born 03-15, offsets [0], channel webhook; tick --now $TICK_NOW --json,"
    echo "  $RUNS runs, each on a fresh copy of a data dir imported at $IMPORT_NOW and ticked at $WATERMARK_NOW"
    echo "  every run: JSON due=$N sent=$N; sink got exactly $N POSTs -> 200, all with distinct Idempotency-Key"
    echo "  (e.g. $BUZZ_KEY_SAMPLE); User-Agent $BUZZ_UA; body $BUZZ_BODY bytes; connections per run:$TICK_CONNS"
    echo "empty tick: same data, --now $EMPTY_NOW (all $N planned, nothing due), $EMPTY_RUNS runs"
    echo "wrk: -t1 -c1 -d${WRK_SECONDS}s, POST JSON body $WRK_BODY_BYTES; run before and after the ticks:"
    awk '{ printf "  %.2f req/s, %d requests, %d connection(s)\n", $1, $2, $3 }' "$TMPROOT/wrk.rates"
    awk 'NR == 1 || $1 < lo { lo = $1 } $1 > hi { hi = $1 }
        END { if (lo > 0 && hi / lo > 1.25)
            printf "  WARNING: the two wrk runs differ by %.0f%%: the machine was busy; the ratios are unreliable\n", (hi / lo - 1) * 100 }' "$TMPROOT/wrk.rates"
    echo "floor: deliver_floor.c (C, libcurl multi with buzz's 0.5 ms spin, one keep-alive connection), $N POSTs of wrk's body,"
    echo "  each after a two-row SQLite commit (WAL, synchronous=NORMAL), and again without the commit; twice each, beside wrk:"
    echo "  with the commit $(awk -v n="$N" '{ printf "%.0f/s  ", n / $1 }' "$TMPROOT/floor.times")without $(awk -v n="$N" '{ printf "%.0f/s  ", n / $1 }' "$TMPROOT/floor-nocommit.times")"
    echo "apprise: deliver_apprise.py, Apprise().add(json://...) then $APPRISE_N x notify() in one process,"
    echo "  timed in-process; sink got exactly $APPRISE_N POSTs -> 200 over $APPRISE_CONNS connection(s); User-Agent $APPRISE_UA; body $APPRISE_BODY bytes"
    echo "tick runs, wall ms (user+sys CPU ms): $(awk '{ printf "%s (%s)  ", $1, $3 }' "$TMPROOT/tick.times")"
    echo "empty tick runs, wall ms (user+sys CPU ms): $(awk '{ printf "%s (%s)  ", $1, $3 }' "$TMPROOT/empty.times")"
    [ "$PERF" = 0 ] || echo "perf profile of one more tick: $PERF_REPORT"
    echo
    awk -v n="$N" -v tm="$T_MED" -v tn="$T_MIN" -v tx="$T_MAX" -v trss="$T_RSS" \
        -v em="$E_MED" -v en="$E_MIN" -v ex="$E_MAX" -v erss="$E_RSS" \
        -v tcpu="$T_CPU" -v ecpu="$E_CPU" -v wrk="$WRK_MEAN" -v an="$APPRISE_N" -v as="$APPRISE_SECONDS" \
        -v tw="$TARGET_WRK" -v ta="$TARGET_APPRISE" -v floor="$FLOOR_RATE" -v bare="$FLOOR_BARE_RATE" '
    function verdict(ok) { return ok ? "PASS" : "FAIL" }
    BEGIN {
        rate = n / (tm / 1000)
        net = tm - em
        nrate = net > 0 ? n / (net / 1000) : 0
        arate = an / as
        printf "%-40s %12s %14s %12s\n", "", "per second", "ms per item", "peak RSS MB"
        printf "%-40s %12.0f %14.4f %12.1f\n", "buzz tick, whole process (median)", rate, tm / n, trss / 1024
        printf "%-40s %12.0f %14.4f\n", "buzz tick, minus the empty tick", nrate, net / n
        printf "%-40s %12.0f %14.4f\n", "wrk, 1 keep-alive connection (mean)", wrk, 1000 / wrk
        printf "%-40s %12.0f %14.4f\n", "C floor: libcurl + commit per send", floor, 1000 / floor
        printf "%-40s %12.0f %14.4f\n", "C floor: libcurl alone", bare, 1000 / bare
        printf "%-40s %12.1f %14.4f\n", "apprise library (N=" an ")", arate, 1000 / arate
        print ""
        printf "buzz tick wall (ms): median %.1f, min %.1f, max %.1f\n", tm, tn, tx
        printf "empty tick wall (ms): median %.1f, min %.1f, max %.1f; peak RSS %.1f MB\n", em, en, ex, erss / 1024
        printf "buzz CPU (user+sys, median): tick %.0f ms, empty tick %.0f ms: %.4f ms CPU per delivery\n", tcpu, ecpu, (tcpu - ecpu) / n
        printf "apprise: %d in %.2f s\n", an, as
        print ""
        rw = rate / wrk; ra = rate / arate
        printf "%-44s %10s %10s  %s\n", "check (whole tick process)", "value", "target", "result"
        printf "%-44s %10.3f %10s  %s\n", "buzz deliveries/s / wrk req/s", rw, ">= " tw, verdict(rw >= tw)
        printf "%-44s %9.1fx %10s  %s\n", "buzz deliveries/s / apprise notifications/s", ra, ">= " ta "x", verdict(ra >= ta)
        printf "(minus the empty tick: %.3f of wrk, %.1fx apprise)\n", nrate / wrk, nrate / arate
        # docs/design/reminders.md ("Exactly once") allows one send in flight per channel, so wrk on one connection
        # (no rendering, no ledger) bounds what any such client can reach.
        printf "wrk on one connection is %.1fx apprise: the most a client with one request in flight reaches here\n", wrk / arate
        # What the prescribed stack allows: libcurl, and a commit before every send.
        printf "the C floor reaches %.3f of wrk with the commit, %.3f without; buzz is %.3f of the floor with the commit\n", floor / wrk, bare / wrk, rate / floor
    }'
} | tee "$REPORT"
log "report saved to $REPORT"
exit 0
