#!/usr/bin/env bash
# Builds buzz and runs it on its embedded defaults against examples/contacts.vcf
# in a throwaway data dir, then prints the buzz list.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
# SwiftPM's progress (resolving, fetching, "[n/m] Compiling", "Build of product")
# is left out: what reaches stderr is a warning or an error, or nothing.
swift build --product buzz 2>&1 \
    | grep -vE '^\[[0-9]+/[0-9]+\]|^(Fetching|Fetched|Computing|Computed|Creating working copy|Working copy of|Building for|Build of product|Build complete|Updating|Updated|Resolving|Resolved|Planning build)' >&2 || true
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
