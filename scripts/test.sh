#!/usr/bin/env bash
# Runs the whole test suite (installing the test servers when missing).
# BUZZ_REQUIRE_SERVERS=1 turns a test server that cannot start into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
# Built optimized (-Xswiftc -O) in the debug configuration, so that a later
# `swift test --skip-build` runs the same build: about 13 minutes from scratch
# on 2 cores instead of 5, and the suite then takes half the CPU
# (docs/development.md, "How long it takes").
swift build --build-tests -Xswiftc -O
swift test --skip-build "$@"
