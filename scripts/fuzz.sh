#!/usr/bin/env bash
# Builds one libFuzzer target and runs it (issue 10, "Fuzzing"):
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer options…]
#
# TARGET is vcard, csv, config, templates, carddav or namedays (Fuzz/Sources/Fuzz*; carddav takes an
# href on the first line and a multistatus reply after it). The targets are a
# package of their own (Fuzz/Package.swift), built in release with
# -sanitize=fuzzer,address into .build-fuzz, so `swift build` and `swift test` never
# see them. The corpus grows in .build-fuzz/corpus/TARGET, seeded from Fuzz/seeds/TARGET
# and the project's own files (examples/contacts.vcf, config.example.toml, templates/);
# a crash, hang or sanitizer report is saved in .build-fuzz/artifacts/TARGET/ and the
# script exits non-zero. Leak checking is off (TOMLKit leaks 40 bytes per
# TOMLTable.keys call); pass -detect_leaks=1 to hunt leaks. Other options
# go to libFuzzer as they are (e.g. -jobs=2, -max_len=65536).
#
# Reproduce a saved input: .build-fuzz/release/FuzzNAME -detect_leaks=0 FILE
set -euo pipefail

if [[ $# -lt 2 ]] || ! [[ $2 =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz.sh vcard|csv|config|templates|carddav|namedays SECONDS [libFuzzer options…]" >&2
    exit 64
fi
target=$1 seconds=$2
shift 2
defaults=()
case $target in
    vcard) product=FuzzVCard ;;
    csv) product=FuzzCSV ;;
    config) product=FuzzConfig; defaults=(-rss_limit_mb=8192) ;;  # TOMLKit leaks ~450 bytes per input: 2 GB in 600 s
    templates) product=FuzzTemplates; defaults=(-max_len=1024) ;;  # templates are short; long ones are unit-tested
    carddav) product=FuzzCardDAV; defaults=(-max_len=4096) ;;
    namedays) product=FuzzNameDays; defaults=(-max_len=4096) ;;
    *) echo "scripts/fuzz.sh: unknown target '$target' (vcard, csv, config, templates or carddav)" >&2; exit 64 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$root/.build-fuzz
swift build -c release --package-path "$root/Fuzz" --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address --product "$product" 2>&1 \
    | grep -v "Cannot export local symbol '__asan_extra_spill_area'" >&2 || true
binary=$scratch/release/$product
[[ -x $binary ]] || { echo "scripts/fuzz.sh: the build of $product failed" >&2; exit 1; }

corpus=$scratch/corpus/$target
artifacts=$scratch/artifacts/$target
mkdir -p "$corpus" "$artifacts"
cp -n "$root/Fuzz/seeds/$target"/* "$corpus/" 2>/dev/null || true
# The project's own fixtures, in each target's input format.
case $target in
    vcard) { printf '\000\001\000'; cat "$root/examples/contacts.vcf"; } > "$corpus/seed-examples-contacts.vcf" ;;
    config) cp "$root/config.example.toml" "$corpus/seed-config.example.toml" ;;
    templates)
        for file in "$root"/templates/*/*.mustache; do
            name=$(basename "$(dirname "$file")")-$(basename "$file")
            case $file in */ask.mustache) kind='\001' ;; *) kind='\000' ;; esac
            { printf "$kind"; cat "$file"; } > "$corpus/seed-$name"
        done ;;
esac

# Leaks: libFuzzer's per-input check and LeakSanitizer's report at exit, both off
# unless -detect_leaks=1 is passed.
leaks=0
for option in "$@"; do [[ $option == -detect_leaks=1 ]] && leaks=1; done
log=$scratch/fuzz-$target.log
echo "fuzzing $product for $seconds s (log: $log)" >&2
status=0
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=$leaks${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    "$binary" -max_total_time="$seconds" -detect_leaks="$leaks" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$root/Fuzz/$target.dict" -artifact_prefix="$artifacts/" ${defaults[@]+"${defaults[@]}"} "$@" "$corpus" \
    > "$log" 2>&1 || status=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
if [[ $status -ne 0 ]] || grep -qE 'ERROR: (libFuzzer|AddressSanitizer)|SUMMARY: |==ERROR' "$log"; then
    grep -E 'ERROR|SUMMARY|Test unit written|Fatal error|Assertion' "$log" >&2 || tail -20 "$log" >&2
    echo "$product: FAILED after ${runs:-?} executions (exit $status); inputs in $artifacts" >&2
    exit 1
fi
echo "$product: ${runs:-?} executions in $seconds s, no crash, hang or sanitizer report"
