#!/usr/bin/env bash
# Writes ShippedTemplates.swift (the shipped templates, embedded so an installed
# binary needs no template files) from templates/*/*.mustache.
# Usage: scripts/embed-templates.sh OUTPUT
# The EmbedTemplates build plugin runs it on every build where a template
# changed; it is not run by hand, and its output is not checked in.
set -euo pipefail
out=$(realpath -m "${1:?usage: embed-templates.sh OUTPUT}")
cd "$(dirname "$0")/.."
mkdir -p "$(dirname "$out")"
tmp="$(mktemp "$out.XXXXXX")"
trap 'rm -f "$tmp"' EXIT

shopt -s nullglob
files=(templates/*/*.mustache)
if [ "${#files[@]}" -eq 0 ]; then
  echo "embed-templates: no templates/*/*.mustache found" >&2
  exit 1
fi
# Same order on every machine.
mapfile -t files < <(printf '%s\n' "${files[@]}" | LC_ALL=C sort)

{
  echo '// Generated at build time by scripts/embed-templates.sh from templates/*/*.mustache: edit those files.'
  echo '// Embedded so an installed binary needs no template files.'
  echo 'public enum ShippedTemplates {'
  echo '    /// Template text by "<locale>/<kind>", e.g. "de/reminder": the exact file bytes.'
  echo '    public static let all: [String: String] = ['
  for file in "${files[@]}"; do
    rel="${file#templates/}"
    key="${rel%.mustache}"
    if ! [[ "$key" =~ ^[A-Za-z0-9_-]+/[A-Za-z0-9_-]+$ ]]; then
      echo "embed-templates: unexpected name $file" >&2
      exit 1
    fi
    if LC_ALL=C grep -q $'\r' "$file"; then
      echo "embed-templates: $file has CR line endings; use LF" >&2
      exit 1
    fi
    # A raw literal #"""…"""# ends at """# and interpolates \#( ; add # until neither occurs.
    hashes='#'
    while grep -qF -e "\"\"\"$hashes" -e "\\$hashes" "$file"; do
      hashes="$hashes#"
    done
    echo "        \"$key\": $hashes\"\"\""
    cat "$file"
    # The newline before the closing delimiter is not part of the literal,
    # so this keeps the file's own trailing newline.
    echo ''
    echo "\"\"\"$hashes,"
  done
  echo '    ]'
  echo '}'
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
