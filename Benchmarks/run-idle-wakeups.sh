#!/usr/bin/env bash
# Idle wake-ups of `buzz run` (docs/design/decisions.md, record 2): a daemon with a
# watched vdir of 200 cards, a console channel and nothing due for days. After it
# has settled (with ACTIVITY=1, after a SIGHUP and a new card synced from the
# watched folder), counts for SECONDS (60) its system calls
# (`perf stat -e 'syscalls:sys_enter_*' -p PID`; needs perf and tracefs), the
# voluntary context switches of all its threads and its CPU ticks. An idle daemon
# makes 0 system calls. Then SIGTERM: the exit status and whether run.pid is gone.
# Run by hand: bash Benchmarks/run-idle-wakeups.sh [BUZZ] [SECONDS]   (never part of `swift test`)
set -u
BUZZ=${1:-.build/debug/buzz}
SECONDS_IDLE=${2:-60}
WORK=$(mktemp -d /tmp/buzz-idle.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/data" "$WORK/cards"
chmod 700 "$WORK/data"
for i in $(seq 1 200); do
    printf 'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u%d\r\nFN:Person %d\r\nBDAY:1980-%02d-%02d\r\nEND:VCARD\r\n' \
        "$i" "$i" $(( (i % 12) + 1 )) $(( (i % 28) + 1 )) > "$WORK/cards/$i.vcf"
done
cat > "$WORK/config.toml" <<CONFIG
[general]
timezone = "UTC"
[contacts]
include_by_default = true
[reminders]
channels = ["console"]
[sources.cards]
type = "vdir"
path = "$WORK/cards"
CONFIG
chmod 600 "$WORK/config.toml"

"$BUZZ" --config "$WORK/config.toml" --data-dir "$WORK/data" run > "$WORK/out.log" 2> "$WORK/err.log" &
PID=$!
for _ in $(seq 1 100); do grep -q "next wake\|nothing planned" "$WORK/err.log" && break; sleep 0.2; done
if [ "${ACTIVITY:-0}" = 1 ]; then
    kill -HUP "$PID"
    sleep 1
    printf 'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:new\r\nFN:New One\r\nBDAY:1980-07-07\r\nEND:VCARD\r\n' > "$WORK/cards/new.vcf"
    for _ in $(seq 1 50); do grep -q "1 added" "$WORK/err.log" && break; sleep 0.2; done
fi
sleep 5

switches() { cat /proc/"$PID"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { v += $2 } END { print v + 0 }'; }
ticks() { awk '{ print $14 + $15 }' /proc/"$PID"/stat; }
threads=$(ls /proc/"$PID"/task | wc -l)
switches0=$(switches); ticks0=$(ticks)
perf stat -e 'syscalls:sys_enter_*' -p "$PID" -o "$WORK/perf.txt" -- sleep "$SECONDS_IDLE" > /dev/null 2>&1
switches1=$(switches); ticks1=$(ticks)
calls=$(awk '$1 ~ /^[0-9,]+$/ && $2 ~ /syscalls:/ { gsub(",", "", $1); n += $1; if ($1 > 0) print "  " $2, $1 > "/dev/stderr" } END { print n + 0 }' "$WORK/perf.txt")
kill -TERM "$PID"
wait "$PID"
status=$?
echo "idle ${SECONDS_IDLE} s: ${calls} system calls, $((switches1 - switches0)) voluntary context switches, $((ticks1 - ticks0)) CPU ticks, ${threads} threads"
echo "after SIGTERM: exit ${status}, run.pid $(test -e "$WORK/data/run.pid" && echo left || echo removed)"
