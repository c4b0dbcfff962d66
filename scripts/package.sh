#!/usr/bin/env bash
# Builds the installed form of buzz (the static-stdlib release build, as
# scripts/install.sh builds it) and writes into .build-package/:
#   birthdaybuzz_VERSION_ARCH.deb                 the Debian package
#   birthdaybuzz-dbgsym_VERSION_ARCH.deb          its debug symbols (/usr/lib/debug/.build-id)
#   birthdaybuzz-VERSION-linux-ARCH.tar.gz        a prefix (bin/, share/…) in one folder,
#                                                 for scripts/install.sh --from
# and prints their paths. VERSION is what the binary's `buzz --version` says;
# ARCH is `dpkg --print-architecture`. Both carry the files scripts/layout.sh
# lists, with the binary stripped, plus the example config, the example
# contacts and the copyright under share/doc/birthdaybuzz.
#
# Usage: scripts/package.sh [--bin PATH]
#   --bin PATH   package this binary instead of building (it should be the
#                static-stdlib release build: the package names no Swift runtime)
# Needs dpkg-dev (dpkg-shlibdeps) and binutils (strip, objcopy, readelf).
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
repo=$PWD
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) [ $# -ge 2 ] || { echo "package.sh: --bin needs a path" >&2; exit 2; }; bin=$2; shift 2 ;;
    --bin=*) bin=${1#--bin=}; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$bin" in /*|"") ;; *) bin="$caller/$bin" ;; esac
for tool in dpkg-deb dpkg-shlibdeps strip objcopy readelf; do
  command -v "$tool" > /dev/null || { echo "package.sh: needs $tool (apt-get install dpkg-dev binutils)" >&2; exit 2; }
done
. "$repo/scripts/layout.sh"

[ -n "$bin" ] || bin=$(build_buzz_release)
[ -x "$bin" ] || { echo "package.sh: $bin is not an executable" >&2; exit 2; }
# "buzz 0.1.0 (1a2b3c4d5e6f)": the version lives in BuzzVersion.swift only.
version=$("$bin" --version | awk '{print $2}')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "package.sh: $bin --version gave no version" >&2; exit 2; }
arch=$(dpkg --print-architecture)
# A Swift runtime the binary would look for means it is not the static build.
if readelf -d "$bin" | grep 'NEEDED.*libswift' >/dev/null; then
  echo "package.sh: $bin links the shared Swift runtime; package the static-stdlib release build" >&2
  exit 2
fi

out="$repo/.build-package"
work="$out/work"
rm -rf "$work"
mkdir -p "$work"
# Reproducible archives: every file dated to the commit's time.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# The prefix both archives carry, with the binary stripped and its debug
# symbols kept aside (found again through the build id, or the debuglink).
prefix="$work/prefix"
stage_buzz_prefix "$prefix" "$bin"
objcopy --only-keep-debug --compress-debug-sections "$prefix/bin/buzz" "$work/buzz.debug"
strip --strip-all "$prefix/bin/buzz"
objcopy --add-gnu-debuglink="$work/buzz.debug" "$prefix/bin/buzz"
"$prefix/bin/buzz" --version > /dev/null || { echo "package.sh: the stripped binary does not start" >&2; exit 1; }
doc="$prefix/share/doc/birthdaybuzz"
install -D -m 644 config.example.toml "$doc/config.example.toml"
install -D -m 644 examples/contacts.vcf "$doc/examples/contacts.vcf"
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: BirthdayBuzz

Files: *
Copyright: the BirthdayBuzz authors
License: none-yet
 The project has not chosen a licence yet; until it does, ask its authors
 before passing this package on.

Files: bin/buzz
Comment: The binary also carries, linked statically, the Swift runtime and
 Foundation (Apache-2.0 with Runtime Library Exception) and ICU's data
 (Unicode License v3), and the Swift packages listed in Package.swift.
EOF

# --- the tarball: the prefix in one folder, units naming %h/.local/bin/buzz
# (install.sh --from rewrites them for its prefix).
tarname="birthdaybuzz-$version-linux-$arch"
tarball="$out/$tarname.tar.gz"
cp -a "$prefix" "$work/$tarname"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  -C "$work" -cf - "$tarname" | gzip -9n > "$tarball"

# --- the .deb: the prefix under /usr, Debian's places for units and docs.
root="$work/deb"
mkdir -p "$root/usr"
cp -a "$prefix/." "$root/usr/"
mkdir -p "$root/usr/lib/systemd/user"
for unit in "$root"/usr/share/systemd/user/*; do
  install_unit_path "$unit" /usr/bin/buzz > "$root/usr/lib/systemd/user/$(basename "$unit")"
done
rm -r "$root/usr/share/systemd"
chmod 644 "$root"/usr/lib/systemd/user/*
gzip -9n "$root/usr/share/man/man1/buzz.1"
{
  echo "birthdaybuzz ($version) unstable; urgency=medium"
  echo
  echo "  * Packaged by scripts/package.sh from commit $("$bin" --version | sed 's/.*(\(.*\))/\1/')."
  echo
  echo " -- BirthdayBuzz <birthdaybuzz@localhost>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$root/usr/share/doc/birthdaybuzz/changelog.gz"

# Depends: the shared libraries the binary names (readelf -d NEEDED), mapped
# to their packages with minimum versions by dpkg-shlibdeps; plus tzdata,
# which the binary reads at start whenever a time zone is named (config,
# contacts) and which no NEEDED entry shows.
mkdir -p "$work/debian"
printf 'Source: birthdaybuzz\n\nPackage: birthdaybuzz\nArchitecture: any\n' > "$work/debian/control"
mkdir -p "$root/DEBIAN"
shlibs=$(cd "$work" && dpkg-shlibdeps -O -e deb/usr/bin/buzz 2> "$work/shlibdeps.log") ||
  { cat "$work/shlibdeps.log" >&2; exit 1; }
depends="${shlibs#shlibs:Depends=}, tzdata"
# Recommends: what buzz opens with dlopen the first time a channel or a
# source needs it (see the sonames in CurlLibrary.swift, LibDBus.swift and
# LibXML2.swift): webhook/mail/CardDAV need libcurl, desktop notifications
# libdbus, CardDAV replies libxml2. Without them buzz starts and says which
# package is missing when the channel is used.
recommends=""
for soname in libcurl.so.4 libdbus-1.so.3 libxml2.so.2; do
  # Read to the end (no `exit`, no `head`): a reader that stops early gives the
  # writer SIGPIPE, which pipefail turns into the script's exit status 141.
  path=$(ldconfig -p | awk -v s="$soname" '$1 == s && !found { print $NF; found = 1 }')
  [ -n "$path" ] || { echo "package.sh: $soname is not installed here, cannot name its package" >&2; exit 1; }
  package=$(dpkg -S "*/$(basename "$(readlink -f "$path")")" | awk -F: 'NR == 1 { print $1 }')
  recommends="${recommends:+$recommends, }$package"
done
# Installed-Size: KiB, as dpkg-gencontrol counts (each file rounded up).
installed_kib=$(find "$root/usr" -type f -printf '%s\n' | awk '{ k += int(($1 + 1023) / 1024) } END { print k }')
cat > "$root/DEBIAN/control" <<EOF
Package: birthdaybuzz
Version: $version
Architecture: $arch
Maintainer: BirthdayBuzz <birthdaybuzz@localhost>
Installed-Size: $installed_kib
Depends: $depends
Recommends: $recommends
Section: utils
Priority: optional
Description: birthday reminders from your contacts (buzz)
 buzz reads birthdays and other dates from vCard files, CSV exports and
 CardDAV address books and reminds you on time through desktop
 notifications, mail, webhooks (ntfy, Gotify, Matrix, Slack, Discord…) or
 any program, as a systemd user service or a timer. It never forgets a
 reminder quietly: missed ones are caught up or reported.
EOF
deb="$out/birthdaybuzz_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null

# --- the debug symbols, where gdb looks for them by build id.
build_id=$(readelf -n "$prefix/bin/buzz" | awk '/Build ID:/ { print $3 }')
dbgroot="$work/dbgsym"
install -D -m 644 "$work/buzz.debug" "$dbgroot/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
mkdir -p "$dbgroot/DEBIAN" "$dbgroot/usr/share/doc"
ln -s birthdaybuzz "$dbgroot/usr/share/doc/birthdaybuzz-dbgsym"
cat > "$dbgroot/DEBIAN/control" <<EOF
Package: birthdaybuzz-dbgsym
Source: birthdaybuzz
Version: $version
Architecture: $arch
Maintainer: BirthdayBuzz <birthdaybuzz@localhost>
Installed-Size: $(du -sk "$dbgroot/usr" | cut -f1)
Depends: birthdaybuzz (= $version)
Section: debug
Priority: optional
Auto-Built-Package: debug-symbols
Build-Ids: $build_id
Description: debug symbols for birthdaybuzz
EOF
dbgsym="$out/birthdaybuzz-dbgsym_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$dbgroot" "$dbgsym" > /dev/null

size() { du -k --apparent-size "$1" | awk '{ printf "%.1f MiB", $1 / 1024 }'; }
{
  echo "birthdaybuzz $version ($arch): binary $(size "$prefix/bin/buzz") stripped (was $(size "$bin")), installed $installed_kib KiB (du: $(du -sh "$root/usr" | cut -f1))"
  echo "  Depends: $depends"
  echo "  Recommends: $recommends"
  echo "  .deb $(size "$deb"), tarball $(size "$tarball"), dbgsym $(size "$dbgsym")"
} >&2
rm -rf "$work"
echo "$deb"
echo "$dbgsym"
echo "$tarball"
