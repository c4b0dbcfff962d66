#!/usr/bin/env bash
# Writes ExampleConfig.swift (config.example.toml, embedded so `buzz init` works
# from an installed binary). Usage: scripts/embed-example-config.sh OUTPUT
# The EmbedTemplates build plugin runs it on every build where the example
# changed; it is not run by hand, and its output is not checked in.
set -euo pipefail
out=$(realpath -m "${1:?usage: embed-example-config.sh OUTPUT}")
cd "$(dirname "$0")/.."
mkdir -p "$(dirname "$out")"
tmp="$(mktemp "$out.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
{
  echo '// Generated at build time by scripts/embed-example-config.sh from config.example.toml: edit that file.'
  echo 'public enum ExampleConfig {'
  echo '    public static let text = #"""'
  cat config.example.toml
  echo ''
  echo '"""#'
  echo '}'
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
