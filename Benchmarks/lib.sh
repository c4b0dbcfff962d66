# shellcheck shell=bash
# Shell code shared by the hand-run benchmarks (run-import-bench.sh,
# run-send-bench.sh, run-deliver-bench.sh). Sourced, never run on its own:
#
#     set -euo pipefail
#     HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
#     PROG=run-something-bench                  # the prefix of die's messages
#     # shellcheck source=lib.sh
#     . "$HERE/lib.sh"
#
# Sourcing it sets ROOT (the package root), OUT (Benchmarks/out), SUDO,
# URL_PATH and the sink defaults below, and defines the functions; it runs
# nothing else. Each function says which globals it reads and sets.

ROOT=$(dirname "$HERE")
# shellcheck disable=SC2034  # used by the scripts
OUT=$HERE/out

# ---------------------------------------------------------------- messages
log() { printf '== %s\n' "$*" >&2; }
die() { printf '%s: %s\n' "$PROG" "$*" >&2; exit 1; }

# ---------------------------------------------------------------- tools
SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi
apt_updated=0
# apt_install PKG...: apt-get install, after one apt-get update per run, with
# sudo when not root. Returns nonzero when either fails (callers retry or die).
apt_install() {
    if [ "$apt_updated" -eq 0 ]; then
        "${SUDO[@]}" apt-get update -qq || return 1
        apt_updated=1
    fi
    # Debian's postinst would start nginx as a system service; a policy-rc.d
    # (as in containers) prevents that, otherwise the service is simply left
    # running on port 80 and does not affect the benchmarks.
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

# find_nginx: prints nginx's path, or nothing when it is not installed.
find_nginx() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true; }

# make_venv DIR: a Python venv in DIR unless there is one (installs python3-venv
# if python3 cannot make one).
make_venv() {
    local venv=$1
    if [ ! -x "$venv/bin/python" ]; then
        log "creating venv $venv"
        if ! python3 -m venv "$venv"; then
            rm -rf "$venv"
            apt_install python3-venv
            python3 -m venv "$venv"
        fi
    fi
}

# ensure_apprise VENV SPEC: Apprise in VENV, installed with pip unless the one
# there already matches SPEC (NAME==VERSION, or any version for another form).
# Sets APPRISE_HAVE to the installed version.
ensure_apprise() {
    local venv=$1 spec=$2 want
    want=${spec#*==}
    APPRISE_HAVE=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("apprise"))' 2>/dev/null || true)
    if [ -z "$APPRISE_HAVE" ] || { [ "$want" != "$spec" ] && [ "$APPRISE_HAVE" != "$want" ]; }; then
        log "installing $spec into $venv (pip)"
        "$venv/bin/python" -m pip install -q "$spec"
        APPRISE_HAVE=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("apprise"))')
    fi
}

# ---------------------------------------------------------------- buzz
# build_buzz NOTE SWIFT_BUILD_ARG...: sets BUZZ to $BUZZ_BIN when that is set,
# otherwise builds the buzz product with these `swift build` arguments from ROOT
# (NOTE is appended to the log line) and sets BUZZ to the binary. Dies if BUZZ
# is not an executable.
build_buzz() {
    local note=$1; shift
    if [ -n "${BUZZ_BIN:-}" ]; then
        BUZZ=$BUZZ_BIN
        log "using prebuilt buzz: $BUZZ"
    else
        # The installed form links SQLite and libstdc++ in (contrib/static-link).
        case " $* " in *" --static-swift-stdlib "*) set -- "$@" -Xlinker -L"$ROOT/contrib/static-link" ;; esac
        log "swift build $* --product buzz$note"
        (cd "$ROOT" && swift build "$@" --product buzz)
        BUZZ=$(cd "$ROOT" && swift build "$@" --show-bin-path)/buzz
    fi
    [ -x "$BUZZ" ] || die "buzz binary not found at $BUZZ"
}

# ---------------------------------------------------------------- temp dirs
SINK_PID=""
# make_tmproot NAME: sets TMPROOT to a new dir ${TMPDIR:-/tmp}/NAME.XXXXXX. On
# exit the sink (SINK_PID) is stopped, if one runs, and TMPROOT is removed
# (kept with BENCH_KEEP=1).
make_tmproot() {
    TMPROOT=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap cleanup EXIT
}
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
    if [ -n "$SINK_PID" ] && kill -0 "$SINK_PID" 2>/dev/null; then
        kill -TERM "$SINK_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SINK_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    if [ "${BENCH_KEEP:-0}" = 1 ]; then log "kept $TMPROOT"; else rm -rf "$TMPROOT"; fi
}

# isolate_env: XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME and HOME point
# into TMPROOT (the caller creates the dirs it needs), no proxy for loopback.
isolate_env() {
    export XDG_CONFIG_HOME=$TMPROOT/xdg-config XDG_DATA_HOME=$TMPROOT/xdg-data XDG_CACHE_HOME=$TMPROOT/xdg-cache
    # Apprise keeps persistent storage under ~/.local/share/apprise unless told;
    # a fresh HOME keeps the user's apprise config and cache out of the runs.
    export HOME=$TMPROOT/home
    unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
    export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
}

# ---------------------------------------------------------------- sink
# A loopback HTTP sink answers 200 to every request on 127.0.0.1:PORT and logs
# one tab-separated line per request to SINK_LOG:
#   METHOD PATH STATUS IDEMPOTENCY-KEY UA BODY-BYTES CONNECTION# REQUEST#-ON-CONNECTION
# (send_sink.py, the Python fallback, logs the first six fields only).
URL_PATH=/hook
# wait_sink's patience: SINK_WAIT_STEPS polls 50 ms apart, then SINK_SETTLE s.
SINK_WAIT_STEPS=40
SINK_SETTLE=0.1

# new_sink_log: SINK_LOG, empty, in TMPROOT/sink.
new_sink_log() {
    mkdir -p "$TMPROOT/sink"
    SINK_LOG=$TMPROOT/sink/requests.log
    : >"$SINK_LOG"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_nginx_sink ACCESS_LOG_OPTS [HTTP_DIRECTIVE...]: nginx ($NGINX) on a free
# port with its own temp config and prefix (TMPROOT/sink/nginx), in the
# foreground as the caller, 1 worker, `return 200 "ok"`. ACCESS_LOG_OPTS is
# appended to the access_log directive (e.g. " buffer=64k flush=100ms"); the
# directives go into the http block. Sets PORT, SINK_PID and SINK_DESC; dies if
# nginx rejects the config. Follow with sink_ready.
start_nginx_sink() {
    local access_opts=$1 dir=$TMPROOT/sink/nginx user_line="" extra; shift
    extra=$(printf '    %s\n' "$@")
    PORT=$(free_port)
    mkdir -p "$dir"
    # As root the workers would switch to "nobody"; keep them as the caller.
    if [ "$(id -u)" -eq 0 ]; then user_line="user $(id -un) $(id -gn);"; fi
    cat >"$dir/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon off;
master_process on;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 64; }
http {
    log_format bench '\$request_method\t\$uri\t\$status\t\$http_idempotency_key\t\$http_user_agent\t\$content_length\t\$connection\t\$connection_requests';
    access_log $SINK_LOG bench$access_opts;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
$extra
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
    "$NGINX" -t -q -p "$dir" -c "$dir/nginx.conf" 2>"$dir/test.err" \
        || { cat "$dir/test.err" >&2; die "nginx rejected its config"; }
    "$NGINX" -p "$dir" -c "$dir/nginx.conf" 2>>"$dir/error.log" &
    SINK_PID=$!
    SINK_DESC="nginx $("$NGINX" -v 2>&1 | sed 's|.*nginx/||'), 1 worker, return 200"
}

# sink_ready: waits (up to 5 s) until the sink (SINK_PID) listens on PORT, dies
# if it does not, then logs SINK_DESC. The probe connection carries no request,
# so the sink logs nothing for it.
sink_ready() {
    for _ in $(seq 100); do port_open "$PORT" && break; kill -0 "$SINK_PID" 2>/dev/null || break; sleep 0.05; done
    port_open "$PORT" || die "the sink is not listening on 127.0.0.1:$PORT"
    log "sink: $SINK_DESC on 127.0.0.1:$PORT"
}

sink_lines() { wc -l <"$SINK_LOG" | tr -d ' '; }
# wait_sink N: waits (SINK_WAIT_STEPS x 50 ms at most) until the log has at
# least N lines, then SINK_SETTLE seconds more (nginx logs after answering).
wait_sink() {
    for _ in $(seq "$SINK_WAIT_STEPS"); do [ "$(sink_lines)" -ge "$1" ] && break; sleep 0.05; done
    sleep "$SINK_SETTLE"
}
# check_phase NAME FROM COUNT NEED_KEY: lines FROM+1 .. FROM+COUNT must be exactly
# COUNT POSTs to URL_PATH answered 200; with NEED_KEY=1 each has an
# Idempotency-Key, all distinct. Dies otherwise. Prints the number of
# connections they used (1 where the sink does not log connections); callers
# that do not want it send it to /dev/null.
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
        { seen[$4] = 1; if (!($7 in conns)) { conns[$7] = 1; nconn++ } }
        END { if (bad) exit 1; print nconn + 0 }' || die "$name: the sink log is not as expected (see above)"
}

# ---------------------------------------------------------------- SQLite floor
# sqlite_floor STORE: the seconds SQLite alone takes to write STORE's contacts
# again, row by row, into a fresh file with STORE's own schema: one
# transaction, WAL, a 64 MiB page cache (at least what buzz's import has),
# `INSERT ... SELECT ... WHERE 1` from STORE attached (the WHERE keeps SQLite
# from copying the b-trees page by page, its transfer optimisation, which no
# import of new cards can use). No vCard is read and no column computed: the
# floor under buzz's writing thread. Needs the sqlite3 CLI (Debian's sqlite3).
sqlite_floor() {
    local store=$1 dir t0 t1
    dir=$(mktemp -d "$TMPROOT/floor.XXXXXX")
    # sqlite_sequence is made by SQLite itself with the first AUTOINCREMENT table.
    sqlite3 "$store" .schema | grep -v '^CREATE TABLE sqlite_sequence' >"$dir/schema.sql"
    sqlite3 "$dir/floor.sqlite" <"$dir/schema.sql"
    sqlite3 "$dir/floor.sqlite" 'PRAGMA journal_mode = WAL' >/dev/null
    cat >"$dir/insert.sql" <<SQL
PRAGMA cache_size = -65536;
ATTACH '$store' AS o;
BEGIN;
INSERT INTO main.contact SELECT * FROM o.contact WHERE 1;
INSERT INTO main.contact_day SELECT * FROM o.contact_day WHERE 1;
COMMIT;
SQL
    cat "$store" "$store-wal" >/dev/null 2>&1 || true
    t0=$EPOCHREALTIME
    sqlite3 "$dir/floor.sqlite" <"$dir/insert.sql" || die "sqlite_floor: sqlite3 failed on $store"
    t1=$EPOCHREALTIME
    rm -rf "$dir"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
