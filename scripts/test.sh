#!/usr/bin/env bash
# Runs the whole test suite (installing the test servers when missing).
# BUZZ_REQUIRE_SERVERS=1 turns a test server that cannot start into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
swift build --build-tests
swift test --skip-build "$@"
