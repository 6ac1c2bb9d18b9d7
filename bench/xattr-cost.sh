#!/bin/bash
# What answering extended attributes costs (README, "File managers"): a local remote mounted
# with and without --no-xattrs, three runs each: `ls -l` of 5,000 files and `find` over 5,000
# with warm placeholders, `dd bs=128K` of 512 MiB into the mount. Prints seconds per run.
# Usage: bench/xattr-cost.sh [FAVFS_BINARY]   (default .build/release/favfs)
set -euo pipefail
BIN=$(realpath "${1:-.build/release/favfs}")
W=$(mktemp -d /tmp/favfs-xattr-cost.XXXXXX)
trap 'mountpoint -q "$W/mnt" && "$BIN" unmount "$W/mnt" >/dev/null 2>&1; rm -rf "$W"' EXIT
mkdir -p "$W/src/many" "$W/mnt"
python3 - "$W/src" <<'P'
import os, sys
root = sys.argv[1]
for i in range(5000): open(f"{root}/many/f{i:05d}.txt", "w").write("x")
for d in range(50):
    os.makedirs(f"{root}/tree/d{d}", exist_ok=True)
    for i in range(100): open(f"{root}/tree/d{d}/g{i}", "w").write("y")
P
run() { # label, extra mount options
  rm -rf "$W/cache"
  "$BIN" mount "$W/mnt" --remote "file://$W/src" --cache-dir "$W/cache" --poll-interval 0 $2 >/dev/null
  ls -l "$W/mnt/many" >/dev/null; find "$W/mnt/tree" >/dev/null   # placeholders warm
  local t1 t2 t3
  t1=$( { /usr/bin/time -f %e ls -l "$W/mnt/many" >/dev/null; } 2>&1 )
  t2=$( { /usr/bin/time -f %e find "$W/mnt/tree" -type f -size -2k >/dev/null; } 2>&1 )
  t3=$( { /usr/bin/time -f %e dd if=/dev/zero of="$W/mnt/big" bs=128K count=4096 status=none; } 2>&1 )
  "$BIN" unmount "$W/mnt" >/dev/null 2>&1; rm -f "$W/src/big"
  echo "$1 ls-l-5000=${t1}s find-5000=${t2}s dd-512MiB-bs128K=${t3}s"
}
for r in 1 2 3; do run xattrs ""; run no-xattrs "--no-xattrs"; done
