#!/usr/bin/env bash
# Builds every release form the README names and checks that each build and
# each binary runs without a word on stderr (issue 10, point 11: a -no-pie binary against the
# shared Swift runtime made glibc's loader warn on every run).
#   scripts/check-release-builds.sh      # ~10 minutes from scratch on 2 cores
# Not part of scripts/test.sh: two release builds would double CI's time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
static=(-c release --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -use-ld=lld
    -Xlinker -L"$PWD/contrib/static-link" --scratch-path .build-static)
plain=(-c release)
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for form in plain static; do
    declare -n args=$form
    # The build itself must be silent too (gold warned about mktemp in the static Foundation).
    if ! swift build "${args[@]}" --product buzz >/dev/null 2>"$tmp/build-err"; then
        echo "FAIL  $form build: $(tail -c 600 "$tmp/build-err")"
        status=1
        continue
    fi
    if [ -s "$tmp/build-err" ]; then
        echo "FAIL  $form build wrote to stderr: $(head -c 600 "$tmp/build-err")"
        status=1
    fi
    bin="$(swift build "${args[@]}" --show-bin-path)/buzz"
    for command in "--help" "list" "upcoming" "doctor"; do
        # shellcheck disable=SC2086
        HOME=$tmp XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config "$bin" $command >/dev/null 2>"$tmp/err" || true
        if [ -s "$tmp/err" ]; then
            echo "FAIL  $form build: buzz $command wrote to stderr: $(head -c 300 "$tmp/err")"
            status=1
        fi
    done
    kind=$(od -An -t x1 -j 16 -N 1 "$bin" | tr -d ' ')  # e_type: 02 fixed address, 03 position-independent
    echo "ok    $form build ($bin, e_type $kind): silent"
done
exit $status
