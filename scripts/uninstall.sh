#!/usr/bin/env bash
# Removes what scripts/install.sh installed under a prefix: the files in its
# manifest, then the folders it created (when empty). Your config and data
# ($XDG_CONFIG_HOME/birthdaybuzz, $XDG_DATA_HOME/birthdaybuzz) stay.
# Usage: scripts/uninstall.sh [--prefix DIR]   (default ~/.local)
set -euo pipefail
prefix="$HOME/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "uninstall.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "uninstall.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
manifest="$prefix/share/birthdaybuzz/install-manifest"
[ -f "$manifest" ] || { echo "uninstall.sh: no install in $prefix ($manifest is missing)" >&2; exit 2; }
mapfile -t entries < "$manifest"
# Files first, then folders innermost first (the manifest lists them outermost first).
for entry in "${entries[@]}"; do
  case "$entry" in
    "file "*) path="$prefix/${entry#file }"; [ "$path" = "$manifest" ] || rm -f -- "$path" ;;
  esac
done
rm -f -- "$manifest"
for (( i=${#entries[@]}-1; i>=0; i-- )); do
  case "${entries[$i]}" in
    "dir .") rmdir -- "$prefix" 2>/dev/null || echo "uninstall.sh: kept $prefix (not empty)" >&2 ;;
    "dir "*) rmdir -- "$prefix/${entries[$i]#dir }" 2>/dev/null || echo "uninstall.sh: kept $prefix/${entries[$i]#dir } (not empty)" >&2 ;;
  esac
done
echo "removed buzz from $prefix"
