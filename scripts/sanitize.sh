#!/usr/bin/env bash
# Builds favfs and the tests with a sanitizer and runs suites that drive the daemon hard (the
# integrity cases: a signal storm and a path too deep for the server; the descriptor model; the
# fault tests), with the end-to-end tests mounting the sanitized binary. Reports land in
# .build-SANITIZER/reports/ (one file per process); the script fails when there is any.
#
#   usage: scripts/sanitize.sh address|thread [swift test --filter REGEX]
#
# A separate build folder (.build-address, .build-thread; git ignores them): a first build
# takes a few minutes. ThreadSanitizer cannot see races inside libsqlite3 or libcurl (not
# instrumented), only in Swift code, GRDB and the C shims.
set -u
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh address|thread [FILTER]}
filter=${2:-IntegrityEndToEndTests|DescriptorModelTests|HungServerEndToEndTests|KillAfterUploadEndToEndTests|FailedUploadEndToEndTests}
scratch=.build-$kind
reports=$PWD/$scratch/reports
swift build --sanitize="$kind" --scratch-path "$scratch" --product favfs || exit 2
swift build --sanitize="$kind" --scratch-path "$scratch" --build-tests || exit 2
rm -rf "$reports"; mkdir -p "$reports"
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=0:halt_on_error=0"
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=0:report_signal_unsafe=0"
FAVFS_BIN="$PWD/$scratch/debug/favfs" swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" --filter "$filter"
status=$?
found=$(grep -lE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer' "$reports"/* 2>/dev/null)
if [ -n "$found" ]; then
    echo "sanitize.sh: $kind reports in:"; echo "$found"; exit 1
fi
echo "sanitize.sh: no $kind reports (tests exited $status)"
exit $status
