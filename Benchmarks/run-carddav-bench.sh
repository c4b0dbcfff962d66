#!/usr/bin/env bash
# CardDAV sync benchmark (issue 11): our client against a local Radicale
# holding 10,000 contacts (5 % with 15 kB photos), compared with the server's
# own answer times (curl) and with `vdirsyncer sync` into a vdir. Prints
# ratios and our RSS; a report, not a gate. See Benchmarks/README.md.
#
#   bash Benchmarks/run-carddav-bench.sh          # ROUNDS=3 CARDS=10000 by default
#
# Our side twice: `carddav-bench` (Benchmarks/CardDAVBench) times the client
# alone (discovery, first sync from nothing, then one from the stored state),
# and `buzz sync` with a carddav source times the whole command (start-up,
# discovery, sync and writing the store): first into an empty data folder,
# then unchanged.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG=run-carddav-bench
# shellcheck source=lib.sh
. "$HERE/lib.sh"

ROUNDS=${ROUNDS:-3}
CARDS=${CARDS:-10000}
RADICALE_SPEC=radicale==3.9.0
VDIRSYNCER_SPEC=vdirsyncer==0.21.0
VENV=$OUT/venv-carddav
mkdir -p "$OUT"

# ---------------------------------------------------------------- tools
[ -x /usr/bin/time ] || apt_install time || die "GNU time is missing"
command -v curl >/dev/null || apt_install curl || die "curl is missing"
make_venv "$VENV"
if ! "$VENV/bin/python" -c 'import radicale, vdirsyncer' 2>/dev/null \
    || [ "$("$VENV/bin/python" -c 'import radicale; print(radicale.VERSION)')" != "${RADICALE_SPEC#*==}" ]; then
    log "installing $RADICALE_SPEC $VDIRSYNCER_SPEC into $VENV (pip)"
    "$VENV/bin/python" -m pip install -q "$RADICALE_SPEC" "$VDIRSYNCER_SPEC"
fi
RADICALE_VERSION=$("$VENV/bin/python" -c 'import radicale; print(radicale.VERSION)')
VDIRSYNCER_VERSION=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("vdirsyncer"))')

if [ -n "${CARDDAV_BENCH_BIN:-}" ]; then
    BENCH=$CARDDAV_BENCH_BIN
else
    log "swift build -c release --product carddav-bench"
    (cd "$ROOT" && swift build -c release --product carddav-bench >&2)
    BENCH=$(cd "$ROOT" && swift build -c release --show-bin-path)/carddav-bench
fi
[ -x "$BENCH" ] || die "carddav-bench not found at $BENCH"
# `buzz sync` as installed (README "Install"): the static release build.
build_buzz " (static, -no-pie; the first static build takes a few minutes)" \
    -c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld

# ---------------------------------------------------------------- data and server
make_tmproot carddav-bench
isolate_env
mkdir -p "$HOME"
CORPUS=$OUT/carddav-cards-$CARDS.vcf
if [ ! -s "$CORPUS" ] || [ "$HERE/generate_cards.py" -nt "$CORPUS" ]; then
    python3 "$HERE/generate_cards.py" "$CARDS" "$CORPUS" "$TMPROOT/cards.rem"
fi
python3 "$HERE/carddav_seed.py" "$CORPUS" "$TMPROOT/radicale/collections" bench
export BENCH_PASSWORD=bench-password
"$VENV/bin/python" "$ROOT/Tests/BuzzCardDAVTests/Servers/radicale_server.py" --storage "$TMPROOT/radicale" \
    --users "bench:$BENCH_PASSWORD" </dev/null >"$TMPROOT/radicale.out" 2>"$TMPROOT/radicale.err" &
SINK_PID=$!
for _ in $(seq 300); do grep -q READY "$TMPROOT/radicale.out" 2>/dev/null && break; kill -0 "$SINK_PID" || break; sleep 0.1; done
grep -q READY "$TMPROOT/radicale.out" || { cat "$TMPROOT/radicale.err" >&2; die "Radicale did not start"; }
PORT=$(awk '{print $2; exit}' "$TMPROOT/radicale.out")
BASE=http://127.0.0.1:$PORT
BOOK=$BASE/bench/contacts/
log "Radicale $RADICALE_VERSION on $BASE ($CARDS cards)"

# now: wall-clock seconds from bash itself (spawning a program to read the
# clock would add its start-up, tens of ms on a loaded machine, to every figure).
now() { printf '%s\n' "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b - a }'; }
dav() {  # dav METHOD DEPTH BODY-FILE OUT: one request with curl, as a plain client; prints curl's time_total
    curl -sS -f -o "$4" -w '%{time_total}\n' -u "bench:$BENCH_PASSWORD" -X "$1" -H "Depth: $2" \
        -H 'Content-Type: application/xml' --data-binary "@$3" "$BOOK"
}
printf '<?xml version="1.0"?><propfind xmlns="DAV:"><prop><resourcetype/><getetag/><sync-token/></prop></propfind>' >"$TMPROOT/list.xml"
log "warming Radicale's cache (it parses every card once)"
log "warm-up listing took $(dav PROPFIND 1 "$TMPROOT/list.xml" "$TMPROOT/listing.xml") s"
# The multiget bodies (200 hrefs each) and the token sync-collection body, from the listing.
python3 - "$TMPROOT" <<'EOF'
import re, sys
root = sys.argv[1]
text = open(root + "/listing.xml").read()
hrefs = [h for h in re.findall(r"<href>([^<]+)</href>", text) if not h.endswith("/")]
token = re.search(r"<sync-token>([^<]+)</sync-token>", text).group(1)
for n, i in enumerate(range(0, len(hrefs), 200)):
    with open("%s/multiget-%03d.xml" % (root, n), "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?><C:addressbook-multiget xmlns:D="DAV:" '
                'xmlns:C="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/><C:address-data/></D:prop>'
                + "".join("<D:href>%s</D:href>" % h for h in hrefs[i:i + 200]) + "</C:addressbook-multiget>")
with open(root + "/initial.xml", "w") as f:
    f.write('<?xml version="1.0"?><sync-collection xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><sync-token/>'
            '<sync-level>1</sync-level><prop><getetag/><C:address-data/></prop></sync-collection>')
with open(root + "/token.xml", "w") as f:
    f.write('<?xml version="1.0"?><sync-collection xmlns="DAV:"><sync-token>%s</sync-token><sync-level>1</sync-level>'
            '<prop><getetag/></prop></sync-collection>' % token)
print(len(hrefs), file=sys.stderr)
EOF
# Measure against Radicale's own server, not the test wrapper (which only
# skips fsync while it builds the item cache above): same storage, warm cache.
kill "$SINK_PID"; wait "$SINK_PID" 2>/dev/null || true
PORT=$(free_port)
"$VENV/bin/python" -m radicale --config "$TMPROOT/radicale/config" --server-hosts "127.0.0.1:$PORT" \
    </dev/null >"$TMPROOT/radicale.out" 2>"$TMPROOT/radicale.err" &
SINK_PID=$!
for _ in $(seq 300); do port_open "$PORT" && break; kill -0 "$SINK_PID" || break; sleep 0.1; done
port_open "$PORT" || { cat "$TMPROOT/radicale.err" >&2; die "radicale did not start"; }
BASE=http://127.0.0.1:$PORT
BOOK=$BASE/bench/contacts/
log "measuring against Radicale's own server on $BASE"
log "its first listing took $(dav PROPFIND 1 "$TMPROOT/list.xml" /dev/null) s"

MULTIGET_ARGS=()
for body in "$TMPROOT"/multiget-*.xml; do
    [ ${#MULTIGET_ARGS[@]} -gt 0 ] && MULTIGET_ARGS+=(--next)
    MULTIGET_ARGS+=(-sS -f -o /dev/null -w '%{time_total}\n' -u "bench:$BENCH_PASSWORD" -X REPORT -H 'Depth: 1' -H 'Content-Type: application/xml'
                    --data-binary "@$body" "$BOOK")
done

cat >"$TMPROOT/vdirsyncer.conf" <<EOF
[general]
status_path = "$TMPROOT/vdirsyncer-status/"
[pair bench]
a = "local"
b = "remote"
collections = ["from b"]
[storage local]
type = "filesystem"
path = "$TMPROOT/vdir/"
fileext = ".vcf"
[storage remote]
type = "carddav"
url = "$BASE/"
username = "bench"
password = "$BENCH_PASSWORD"
EOF

# `buzz sync` with one carddav source (the password from the environment).
mkdir -p "$TMPROOT/buzz-config"
printf '[general]\ntimezone = "UTC"\n[reminders]\nchannels = ["console"]\n[sources.bench]\ntype = "carddav"\nurl = "%s/"\nusername = "bench"\npassword_env = "BENCH_PASSWORD"\n' \
    "$BASE" >"$TMPROOT/buzz-config/config.toml"

# ---------------------------------------------------------------- rounds
RESULTS=$TMPROOT/results.tsv
: >"$RESULTS"
for round in $(seq "$ROUNDS"); do
    log "round $round of $ROUNDS"
    # The server's times as curl measures each transfer (no process start-up).
    printf 'server_list\t%s\n' "$(dav PROPFIND 1 "$TMPROOT/list.xml" /dev/null)" >>"$RESULTS"
    printf 'server_multiget\t%s\n' "$(curl "${MULTIGET_ARGS[@]}" | awk '{ s += $1 } END { printf "%.4f", s }')" >>"$RESULTS"
    printf 'server_token_sync\t%s\n' "$(dav REPORT 0 "$TMPROOT/token.xml" /dev/null)" >>"$RESULTS"
    # What our first sync asks: one initial sync-collection with every card's data.
    printf 'server_initial\t%s\n' "$(dav REPORT 0 "$TMPROOT/initial.xml" /dev/null)" >>"$RESULTS"

    /usr/bin/time -f 'rss_kb %M' -o "$TMPROOT/ours.time" "$BENCH" "$BASE/" bench BENCH_PASSWORD 2 >"$TMPROOT/ours.out"
    awk '$1 == "sync" && $2 == 0 {print "ours_first\t" $NF} $1 == "sync" && $2 == 1 {print "ours_unchanged\t" $NF}
         $1 == "discover" {print "ours_discover\t" $NF}' "$TMPROOT/ours.out" >>"$RESULTS"
    awk '$1 == "sync" && $2 == 0 && $4 != '"$CARDS"' {exit 1}' "$TMPROOT/ours.out" || die "our first sync did not read $CARDS cards: $(cat "$TMPROOT/ours.out")"
    printf 'ours_rss_kb\t%s\n' "$(awk '{print $2}' "$TMPROOT/ours.time")" >>"$RESULTS"
    # Ours as a command, for the comparison with vdirsyncer's: start-up, discovery and the first sync.
    t0=$(now); "$BENCH" "$BASE/" bench BENCH_PASSWORD 1 >/dev/null; t1=$(now)
    printf 'ours_first_command\t%s\n' "$(elapsed "$t0" "$t1")" >>"$RESULTS"

    # buzz sync: first into an empty data folder (RSS too), then unchanged.
    rm -rf "$TMPROOT/buzz-data"
    t0=$(now); /usr/bin/time -f 'rss_kb %M' -o "$TMPROOT/buzz.time" "$BUZZ" --config "$TMPROOT/buzz-config/config.toml" \
        --data-dir "$TMPROOT/buzz-data" sync >"$TMPROOT/buzz.out" 2>"$TMPROOT/buzz.err"; t1=$(now)
    grep -q "^bench: $CARDS added" "$TMPROOT/buzz.out" || die "buzz sync did not add $CARDS cards: $(cat "$TMPROOT/buzz.out" "$TMPROOT/buzz.err")"
    printf 'buzz_sync_first\t%s\n' "$(elapsed "$t0" "$t1")" >>"$RESULTS"
    printf 'buzz_sync_rss_kb\t%s\n' "$(awk '{print $2}' "$TMPROOT/buzz.time")" >>"$RESULTS"
    t0=$(now); "$BUZZ" --config "$TMPROOT/buzz-config/config.toml" --data-dir "$TMPROOT/buzz-data" sync >"$TMPROOT/buzz.out"; t1=$(now)
    grep -q "^bench: 0 added, 0 updated" "$TMPROOT/buzz.out" || die "the unchanged buzz sync changed something: $(cat "$TMPROOT/buzz.out")"
    printf 'buzz_sync_unchanged\t%s\n' "$(elapsed "$t0" "$t1")" >>"$RESULTS"

    rm -rf "$TMPROOT/vdir" "$TMPROOT/vdirsyncer-status"
    { yes || true; } | "$VENV/bin/vdirsyncer" -c "$TMPROOT/vdirsyncer.conf" discover >/dev/null 2>&1 || die "vdirsyncer discover failed"
    t0=$(now); "$VENV/bin/vdirsyncer" -c "$TMPROOT/vdirsyncer.conf" sync >/dev/null 2>"$TMPROOT/vdirsyncer.err" \
        || { cat "$TMPROOT/vdirsyncer.err" >&2; die "vdirsyncer sync failed"; }; t1=$(now)
    printf 'vdirsyncer_first\t%s\n' "$(elapsed "$t0" "$t1")" >>"$RESULTS"
    t0=$(now); "$VENV/bin/vdirsyncer" -c "$TMPROOT/vdirsyncer.conf" sync >/dev/null 2>&1; t1=$(now)
    printf 'vdirsyncer_unchanged\t%s\n' "$(elapsed "$t0" "$t1")" >>"$RESULTS"
    synced=$(find "$TMPROOT/vdir" -name '*.vcf' | wc -l)
    [ "$synced" -eq "$CARDS" ] || die "vdirsyncer wrote $synced cards, not $CARDS"
done

# ---------------------------------------------------------------- report
python3 - "$RESULTS" "$RADICALE_VERSION" "$VDIRSYNCER_VERSION" "$CARDS" "$ROUNDS" <<'EOF' | tee "$OUT/last-carddav-report.txt"
import statistics, sys
path, radicale, vdirsyncer, cards, rounds = sys.argv[1:6]
values = {}
for line in open(path):
    key, value = line.split("\t")
    values.setdefault(key, []).append(float(value))
m = {k: statistics.median(v) for k, v in values.items()}
server_first = m["server_list"] + m["server_multiget"]
print(f"CardDAV sync: Radicale {radicale} on loopback, {cards} cards (5 % with 15 kB photos), median of {rounds} rounds")
print(f"  server (curl): list {m['server_list']:.3f} s + multiget {m['server_multiget']:.3f} s = {server_first:.3f} s; "
      f"initial sync-collection with the cards' data {m['server_initial']:.3f} s; "
      f"token sync-collection {m['server_token_sync']:.3f} s")
print(f"  ours (BuzzCardDAV): discovery {m['ours_discover']:.3f} s, first sync {m['ours_first']:.3f} s, "
      f"unchanged re-sync {m['ours_unchanged']:.3f} s, max RSS {max(values['ours_rss_kb']) / 1024:.1f} MB (target <= 100)")
print(f"  buzz sync (the whole command): first {m['buzz_sync_first']:.3f} s, unchanged {m['buzz_sync_unchanged']:.3f} s, "
      f"max RSS {max(values['buzz_sync_rss_kb']) / 1024:.1f} MB")
print(f"  vdirsyncer {vdirsyncer}: first sync {m['vdirsyncer_first']:.3f} s, unchanged {m['vdirsyncer_unchanged']:.3f} s")
print(f"  first sync / server list+multiget: {m['ours_first'] / server_first:.2f}x (target <= 1.3); "
      f"/ the server's initial sync-collection with data (the one request it makes): {m['ours_first'] / m['server_initial']:.2f}x")
print(f"  unchanged re-sync - server token sync: {(m['ours_unchanged'] - m['server_token_sync']) * 1000:+.0f} ms (target <= +50)")
print(f"  vdirsyncer / ours, first sync as commands: {m['vdirsyncer_first'] / m['ours_first_command']:.1f}x faster "
      f"(ours {m['ours_first_command']:.3f} s with start-up and discovery; target >= 5)")
print(f"  vdirsyncer / ours, unchanged: {m['vdirsyncer_unchanged'] / m['ours_unchanged']:.1f}x faster")
print(f"  vdirsyncer / buzz sync: first {m['vdirsyncer_first'] / m['buzz_sync_first']:.1f}x faster, "
      f"unchanged {m['vdirsyncer_unchanged'] / m['buzz_sync_unchanged']:.1f}x faster")
print("raw (seconds, one column per round):")
for key, v in values.items():
    print("  %-22s %s" % (key, "  ".join("%.3f" % x for x in v)))
EOF
