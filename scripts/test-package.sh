#!/usr/bin/env bash
# Installs the .deb from scripts/package.sh into a clean Debian 12 (bookworm)
# root and uses it as a new user would: buzz --version, init, import of the
# example contacts, list, doctor, a send to a webhook on loopback; then
# apt-get remove --purge must leave no file of the package behind.
#
# The root comes from debootstrap (minbase), fetched from Debian's archive once
# and kept in .build-package/debian12-root; every run works on a fresh copy of
# it, so a second run needs only the few packages the .deb pulls in. Needs
# root (chroot, mount) and the network to Debian's archive. Not part of
# .ci/run.
#
# Usage: scripts/test-package.sh [DEB]   (default: the newest .deb in .build-package/)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out="$repo/.build-package"
deb=${1:-$(ls -t "$out"/birthdaybuzz_*.deb 2> /dev/null | head -n 1)}
[ -f "$deb" ] || { echo "test-package.sh: no .deb (run scripts/package.sh first)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "test-package.sh: needs root (chroot and mount)" >&2; exit 2; }
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache="$out/debian12-root"
root="$out/debian12-run"

step() { printf '\n=== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ ! -x "$cache/usr/bin/apt-get" ]; then
  command -v debootstrap > /dev/null || apt-get install -y -o DPkg::Lock::Timeout=300 debootstrap
  step "debootstrap bookworm (minbase) into $cache, once"
  rm -rf "$cache.partial"
  debootstrap --variant=minbase bookworm "$cache.partial" "$mirror"
  mv "$cache.partial" "$cache"
fi

server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2> /dev/null || true
  for mount in "$root/dev/pts" "$root/dev" "$root/proc"; do
    if mountpoint -q "$mount" 2> /dev/null; then umount "$mount" || umount -l "$mount"; fi
  done
}
trap cleanup EXIT
# rm -rf of a root with /dev still bound in would empty the host's /dev.
remove_root() {
  cleanup
  if awk -v r="$root/" 'index($2, r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    fail "something is still mounted under $root; not removing it"
  fi
  rm -rf "$root"
}

step "a fresh copy of the cached root"
if [ -d "$root" ]; then remove_root; fi
cp -a "$cache" "$root"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# No service starts inside the chroot (dbus's postinst would try).
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
cp "$deb" "$root/tmp/"
name=$(basename "$deb")
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
apt() { in_root apt-get -q -o Dpkg::Use-Pty=0 "$@"; }
# As the new user, with nothing of this machine's environment.
as_user() {
  printf '$'; printf ' %q' "$@"; printf '\n'
  chroot --userspec=sam:sam "$root" env -i HOME=/home/sam USER=sam PATH=/usr/bin:/bin LANG=C.UTF-8 TZ=Europe/Berlin "$@"
}
in_root useradd --create-home --shell /bin/bash sam
echo "Swift in the root: $(in_root sh -c 'command -v swift || ls /usr/lib/swift 2> /dev/null || echo none')"

step "apt-get install --no-install-recommends ./$name (Depends only)"
apt update
apt install -y --no-install-recommends "/tmp/$name"
in_root dpkg-query -W -f='${Package} ${Version}\nDepends: ${Depends}\nRecommends: ${Recommends}\n' birthdaybuzz
version=$(dpkg-deb -f "$deb" Version)
as_user buzz --version | tee "$root/tmp/version"
grep -q "^buzz $version (" "$root/tmp/version" || fail "buzz --version does not report $version"
as_user buzz init < /dev/null
as_user buzz import /usr/share/doc/birthdaybuzz/examples/contacts.vcf
as_user buzz list
# A Hebrew-calendar birthday needs the ICU data inside the binary: Yael's
# (BDAY;CALSCALE=hebrew) falls on 2027-04-17 seen from 2026-11-28.
as_user buzz list --json --now 2026-11-28 > "$root/tmp/list.json"
grep -q '"name":"Yael Cohen".*"next":"2027-04-17"' "$root/tmp/list.json" || fail "Yael's Hebrew birthday is not on 2027-04-17"
echo "Yael Cohen's Hebrew-calendar birthday: next on 2027-04-17, as expected"

# A webhook on the host's loopback (the chroot shares the network).
python3 - "$root/tmp/port" "$root/tmp/received" <<'EOF' &
import http.server, sys
port_file, received = sys.argv[1], sys.argv[2]
class Sink(http.server.BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        with open(received, "a") as out:
            out.write(f"{self.command} {self.path} {body}\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_POST = do_GET = do_HEAD = do_PUT = answer
    def log_message(self, *args): pass
server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
with open(port_file + ".tmp", "w") as out: out.write(str(server.server_port))
import os; os.rename(port_file + ".tmp", port_file)
server.serve_forever()
EOF
server_pid=$!
for _ in $(seq 100); do [ -s "$root/tmp/port" ] && break; sleep 0.1; done
port=$(cat "$root/tmp/port")
cat >> "$root/home/sam/.config/birthdaybuzz/config.toml" <<EOF

# Added by scripts/test-package.sh: a webhook on loopback.
[channels.hook]
type = "webhook"
url = "http://127.0.0.1:$port/hook"
EOF

step "without the Recommends, the webhook says which package it needs"
set +e
as_user buzz send --channel hook --title "Package test" "sent without libcurl" 2> "$root/tmp/send.err"
status=$?
set -e
cat "$root/tmp/send.err"
{ [ "$status" = 1 ] && grep -q libcurl4 "$root/tmp/send.err"; } || fail "send without libcurl: status $status, no word of libcurl4"

read -ra recommends <<< "$(dpkg-deb -f "$deb" Recommends | tr -d ',')"
step "apt-get install ${recommends[*]} (the Recommends, as a plain apt-get install ./$name brings them)"
apt install -y "${recommends[@]}"
as_user buzz doctor
as_user buzz send --channel hook --title "Package test" "Hello from the Debian 12 root"
echo "the webhook received:"
cat "$root/tmp/received"
grep -q "^POST /hook .*Hello from the Debian 12 root" "$root/tmp/received" || fail "the webhook got no POST with the message"

step "apt-get remove --purge birthdaybuzz leaves nothing of ours"
in_root dpkg -L birthdaybuzz > "$root/tmp/owned"
echo "$(wc -l < "$root/tmp/owned") paths installed"
apt remove --purge -y birthdaybuzz
left=0
while IFS= read -r path; do
  [ "$path" != "/." ] || continue
  [ -e "$root$path" ] || [ -L "$root$path" ] || continue
  # A folder may stay when another package owns it too.
  if [ -d "$root$path" ] && in_root dpkg -S "$path" > /dev/null 2>&1; then continue; fi
  echo "left behind: $path"
  left=$((left + 1))
done < "$root/tmp/owned"
[ "$left" = 0 ] || fail "$left paths left behind"
in_root sh -c '! dpkg -s birthdaybuzz > /dev/null 2>&1' || fail "dpkg still knows birthdaybuzz"
echo "none left; the user's own config and data stay: $(cd "$root/home/sam" && find .config .local -type f | sort | tr '\n' ' ')"

remove_root
step "PASS: $name installs, runs as a new user and purges cleanly on Debian 12"
