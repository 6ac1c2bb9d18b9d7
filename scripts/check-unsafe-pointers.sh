#!/usr/bin/env bash
# Fails on the pointer escapes the Swift compiler does not warn about: a pointer returned out
# of its withUnsafe… closure (`{ $0 }`, `{ p in p }`) and pointers made from `&x` outside a
# call. Optimised builds turn these into garbage (the release binary once read random open flags).
set -u
cd "$(dirname "$0")/.."
pattern='withUnsafe(Mutable)?(Bytes|Pointer|BufferPointer)(\(to:[^)]*\))? *\{ *(\$0|([a-z]+) in \5) *\}|Unsafe(Mutable)?(Raw)?Pointer(<[^>]*>)?\(&'
if grep -rnE "$pattern" Sources; then
    echo "check-unsafe-pointers: a pointer escapes its closure (above); use it inside the closure" >&2
    exit 1
fi
# swift-foundation's FileManager.copyItem writes out of bounds for a destination path longer
# than PATH_MAX (heap corruption in the daemon, which copies user-named files): FileCopy instead.
if grep -rn 'FileManager\.default\.copyItem' Sources/FavFSCore Sources/Providers Sources/FUSEBridge; then
    echo "check-unsafe-pointers: FileManager.copyItem in the daemon's code (above); use FileCopy" >&2
    exit 1
fi
echo "check-unsafe-pointers: no escaping pointers in Sources, no FileManager.copyItem in the daemon"
