#!/usr/bin/env bash
# Runs pjdfstest (github.com/pjd/pjdfstest, built by you: autoreconf -ifs && ./configure && make
# pjdfstest) inside a favfs mount, folder by folder, as root, and prints per folder how many of
# its test files and assertions passed; then checks what the run did to the daemon: its log for
# SQLite's "malformed", the database with PRAGMA integrity_check, and that unmount returns.
#
#   usage: scripts/pjdfstest.sh PJDFSTEST_DIR [dav|smb|local] [--allow-other] [FAVFS_BINARY]
#
# dav: a private Apache mod_dav on a free loopback port; smb: a private Samba smbd; local: a temp folder (file://)
# (scripts/suite-mount.sh). Exit status 1 when the daemon's database was damaged or it died.
set -u
pjd=${1:?usage: scripts/pjdfstest.sh PJDFSTEST_DIR [dav|smb|local] [--allow-other] [FAVFS_BINARY]}
kind=${2:-dav}; extra=""; [ "${3:-}" = "--allow-other" ] && extra="--allow-other"
bin=${4:-$(swift build -c release --show-bin-path 2>/dev/null)/favfs}
[ -x "$pjd/pjdfstest" ] || { echo "no $pjd/pjdfstest: build it first" >&2; exit 2; }
. "$(dirname "$0")/suite-mount.sh"
suite_mount "$kind" "$extra" "$bin"
mkdir -p "$MNT/pjd"
total_files=0; total_ok=0; total_asserts=0; total_failed=0
printf '%-12s %12s %18s\n' folder "files ok" "assertions failed"
for dir in "$pjd"/tests/*/; do
    name=$(basename "$dir")
    out=$(cd "$MNT/pjd" && timeout 1200 prove -r "$dir" 2>&1)
    files=$(printf '%s\n' "$out" | grep -cE '\.t \.+ ')
    ok=$(printf '%s\n' "$out" | grep -cE '\.t \.+ ok')
    asserts=$(printf '%s\n' "$out" | sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p')
    failed=$(printf '%s\n' "$out" | grep -oE 'Tests: [0-9]+ Failed: [0-9]+\)' | awk '{s+=$4} END {print s+0}')
    printf '%-12s %5s of %-5s %8s of %-6s\n' "$name" "$ok" "$files" "$failed" "${asserts:-0}"
    total_files=$((total_files + files)); total_ok=$((total_ok + ok))
    total_asserts=$((total_asserts + ${asserts:-0})); total_failed=$((total_failed + failed))
done
printf '%-12s %5s of %-5s %8s of %-6s\n' all "$total_ok" "$total_files" "$total_failed" "$total_asserts"
suite_check "$bin"
