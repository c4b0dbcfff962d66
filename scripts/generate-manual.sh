#!/usr/bin/env bash
# Regenerates contrib/man/buzz.1: argument-parser's manual generator (the
# generate-manual plugin, from the commands' help), then the hand-written
# ENVIRONMENT, FILES, EXIT STATUS and EXAMPLES of contrib/man/buzz-extra.mdoc.
# Run it after changing a command's options (InstallScriptTests checks that
# the page names every command). scripts/install.sh installs the result.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package plugin generate-manual >&2
generated=$(find .build/plugins/GenerateManual/outputs -name buzz.1 | head -n 1)
[ -n "$generated" ] || { echo "generate-manual.sh: the plugin wrote no buzz.1" >&2; exit 1; }
out=contrib/man/buzz.1
# The extra sections go before the generated AUTHORS or SEE ALSO, else at the end.
# The generated EXIT STATUS (".Ex -std": 0 or more) gives way to ours (docs/design/command-line.md, "Exit statuses").
# The version, from its one place (BuzzVersion.swift), on the page's .Os line.
version=$(sed -n 's/^ *static let number = "\([^"]*\)".*/\1/p' Sources/BuzzCommands/BuzzVersion.swift)
[ -n "$version" ] || { echo "generate-manual.sh: no version in Sources/BuzzCommands/BuzzVersion.swift" >&2; exit 1; }
awk -v extra=contrib/man/buzz-extra.mdoc -v version="$version" '
  /^\.Os$/ { print ".Os BirthdayBuzz " version; next }
  /^\.Sh "?EXIT STATUS"?$/ || /^\.Ex -std/ { next }
  !done && /^\.Sh (AUTHORS|"?SEE ALSO"?)/ { while ((getline line < extra) > 0) print line; done = 1 }
  { print }
  END { if (!done) while ((getline line < extra) > 0) print line }
' "$generated" > "$out"
echo "wrote $out" >&2
