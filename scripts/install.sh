#!/usr/bin/env bash
# Installs buzz for one user (default prefix ~/.local) or system-wide: the
# files scripts/layout.sh lists (bin/buzz, completions, the manual, the systemd
# user units naming the installed binary, the desktop entry and its icon), and
# a manifest of every file and folder it created
# (share/birthdaybuzz/install-manifest), which scripts/uninstall.sh removes.
#
# Usage: scripts/install.sh [--prefix DIR] [--bin PATH | --from TARBALL]
#   --prefix DIR      where to install (default ~/.local)
#   --bin PATH        install this buzz binary instead of building the release one
#   --from TARBALL    install a birthdaybuzz-VERSION-linux-ARCH.tar.gz made by
#                     scripts/package.sh, without building (no Swift needed)
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
repo=$PWD
prefix="$HOME/.local"
bin=""
from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --bin) [ $# -ge 2 ] || { echo "install.sh: --bin needs a path" >&2; exit 2; }; bin=$2; shift 2 ;;
    --bin=*) bin=${1#--bin=}; shift ;;
    --from) [ $# -ge 2 ] || { echo "install.sh: --from needs a tarball" >&2; exit 2; }; from=$2; shift 2 ;;
    --from=*) from=${1#--from=}; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
# Relative paths are the caller's, not the repository's (the script cd's there).
case "$prefix" in /*) ;; *) prefix="$caller/$prefix" ;; esac
case "$bin" in /*|"") ;; *) bin="$caller/$bin" ;; esac
case "$from" in /*|"") ;; *) from="$caller/$from" ;; esac

manifest_rel=share/birthdaybuzz/install-manifest
manifest="$prefix/$manifest_rel"
if [ -e "$manifest" ]; then
  echo "install.sh: $prefix already has an install (run scripts/uninstall.sh --prefix $prefix first)" >&2
  exit 2
fi
[ -z "$bin" ] || [ -z "$from" ] || { echo "install.sh: --bin and --from exclude each other" >&2; exit 2; }
. "$repo/scripts/layout.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$from" ]; then
  [ -f "$from" ] || { echo "install.sh: $from is not a file" >&2; exit 2; }
  mkdir "$work/unpacked"
  tar -xzf "$from" -C "$work/unpacked" --no-same-owner || { echo "install.sh: cannot unpack $from" >&2; exit 2; }
  # The tarball holds a prefix, at its top or (as package.sh makes it) in one folder.
  stage="$work/unpacked"
  if [ ! -f "$stage/bin/buzz" ]; then
    tops=("$stage"/*)
    [ ${#tops[@]} -eq 1 ] && stage=${tops[0]}
  fi
  [ -f "$stage/bin/buzz" ] || { echo "install.sh: $from holds no bin/buzz (not a buzz tarball)" >&2; exit 2; }
  # Only plain files and folders: a link in a tarball could point anywhere.
  odd=$(find "$stage" ! -type f ! -type d -print -quit)
  [ -z "$odd" ] || { echo "install.sh: $from holds ${odd#"$stage"/}, which is neither a file nor a folder" >&2; exit 2; }
else
  [ -n "$bin" ] || bin=$(build_buzz_release)
  [ -x "$bin" ] || { echo "install.sh: $bin is not an executable" >&2; exit 2; }
  stage="$work/stage"
  stage_buzz_prefix "$stage" "$bin"
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
make_dir "$prefix"
while IFS= read -r target; do
  case "$target" in
    # The units name the installed binary.
    share/systemd/user/*) install_unit_path "$stage/$target" "$prefix/bin/buzz" > "$work/unit"; put 644 "$work/unit" "$target" ;;
    "$manifest_rel") ;;  # ours is written below
    bin/*) put 755 "$stage/$target" "$target" ;;
    *) put 644 "$stage/$target" "$target" ;;
  esac
done < <(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
make_dir "$(dirname "$manifest")"
printf '%s\n' "${entries[@]}" "file $manifest_rel" > "$manifest"

echo "installed buzz into $prefix (manifest: $manifest)"
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "note: $prefix/bin is not on PATH" ;; esac
echo "next: buzz init; then systemctl --user daemon-reload && systemctl --user enable --now birthdaybuzz.service"
