#!/usr/bin/env bash
# Builds buzz and runs it on its embedded defaults against examples/contacts.vcf
# in a throwaway data dir, then prints the buzz list.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
swift build --product buzz 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' >&2 || true
bin="$(swift build --show-bin-path)/buzz"
[ -x "$bin" ] || { echo "build failed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
"$bin" import examples/contacts.vcf
echo
"$bin" list --all
echo
"$bin" upcoming --limit 5
