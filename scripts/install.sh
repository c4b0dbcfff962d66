#!/usr/bin/env bash
# Installs buzz for one user (default prefix ~/.local) or system-wide:
#   bin/buzz                                      the static release binary
#   share/bash-completion/completions/buzz        bash completion
#   share/zsh/site-functions/_buzz                zsh completion
#   share/fish/vendor_completions.d/buzz.fish     fish completion
#   share/man/man1/buzz.1                         the manual
#   share/systemd/user/birthdaybuzz*.{service,timer}  the systemd user units
#   share/applications/birthdaybuzz.desktop       the desktop entry notifications name
#   share/icons/hicolor/scalable/apps/birthdaybuzz.svg
# and a manifest of every file and folder it created
# (share/birthdaybuzz/install-manifest), which scripts/uninstall.sh removes.
#
# Usage: scripts/install.sh [--prefix DIR] [--bin PATH]
#   --prefix DIR  where to install (default ~/.local)
#   --bin PATH    install this buzz binary instead of building the release one
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
prefix="$HOME/.local"
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --bin) [ $# -ge 2 ] || { echo "install.sh: --bin needs a path" >&2; exit 2; }; bin=$2; shift 2 ;;
    --bin=*) bin=${1#--bin=}; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac

if [ -z "$bin" ]; then
  # Exactly as README "Install": static Swift runtime, fixed address (-no-pie).
  release=(-c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld)
  swift build "${release[@]}" --product buzz >&2
  bin="$(swift build "${release[@]}" --show-bin-path)/buzz"
fi
[ -x "$bin" ] || { echo "install.sh: $bin is not an executable" >&2; exit 2; }

manifest_rel=share/birthdaybuzz/install-manifest
manifest="$prefix/$manifest_rel"
if [ -e "$manifest" ]; then
  echo "install.sh: $prefix already has an install (run scripts/uninstall.sh --prefix $prefix first)" >&2
  exit 2
fi
entries=()
# mkdir -p that remembers each folder it creates (outermost first).
make_dir() {
  local dir=$1 missing=()
  while [ ! -d "$dir" ]; do missing=("$dir" "${missing[@]}"); dir=$(dirname "$dir"); done
  for dir in "${missing[@]}"; do
    mkdir "$dir"
    # Folders above the prefix are not the install's; the prefix itself is ".".
    if [ "$dir" = "$prefix" ]; then entries+=("dir ."); elif [ "${dir#"$prefix"/}" != "$dir" ]; then entries+=("dir ${dir#"$prefix"/}"); fi
  done
}
# put MODE SOURCE RELATIVE-TARGET
put() {
  local mode=$1 source=$2 target=$3
  make_dir "$(dirname "$prefix/$target")"
  install -m "$mode" "$source" "$prefix/$target"
  entries+=("file $target")
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_dir "$prefix"
put 755 "$bin" bin/buzz
"$bin" --generate-completion-script bash > "$work/buzz.bash"
"$bin" --generate-completion-script zsh > "$work/_buzz"
"$bin" --generate-completion-script fish > "$work/buzz.fish"
put 644 "$work/buzz.bash" share/bash-completion/completions/buzz
put 644 "$work/_buzz" share/zsh/site-functions/_buzz
put 644 "$work/buzz.fish" share/fish/vendor_completions.d/buzz.fish
put 644 contrib/man/buzz.1 share/man/man1/buzz.1
# The units name the installed binary.
for unit in birthdaybuzz.service birthdaybuzz-tick.service birthdaybuzz-tick.timer; do
  sed "s|%h/.local/bin/buzz|$prefix/bin/buzz|g" "contrib/systemd/$unit" > "$work/$unit"
  put 644 "$work/$unit" "share/systemd/user/$unit"
done
put 644 contrib/desktop/birthdaybuzz.desktop share/applications/birthdaybuzz.desktop
put 644 contrib/desktop/birthdaybuzz.svg share/icons/hicolor/scalable/apps/birthdaybuzz.svg
make_dir "$(dirname "$manifest")"
printf '%s\n' "${entries[@]}" "file $manifest_rel" > "$manifest"

echo "installed buzz into $prefix (manifest: $manifest)"
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "note: $prefix/bin is not on PATH" ;; esac
echo "next: buzz init; then systemctl --user daemon-reload && systemctl --user enable --now birthdaybuzz.service"
