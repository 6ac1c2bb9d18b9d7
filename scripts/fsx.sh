#!/usr/bin/env bash
# Runs xfstests' fsx (github.com/kdave/xfstests, ltp/fsx.c: random reads, writes, truncates,
# mmap reads and writes, close and reopen, each checked against an in-memory copy of the file)
# on files inside a favfs mount, then checks the daemon as scripts/pjdfstest.sh does. fsx is
# compiled here from the xfstests tree without its configure step.
#
#   usage: scripts/fsx.sh XFSTESTS_DIR [dav|smb|local] [OPERATIONS] [FAVFS_BINARY]
#
# Two fsx runs, one after the other, each -N OPERATIONS (default 20000) with close and reopen
# (-c 40) on a file of up to 4 MiB (-l): with mapped reads and writes, and with read() and
# write() only (-R -W). Seeds are fixed (-S), so a failure replays; fsx's logs go outside the
# mount.
# Exit status 1 when fsx found a mismatch or the daemon's database was damaged or it died.
set -u
xfs=${1:?usage: scripts/fsx.sh XFSTESTS_DIR [dav|smb|local] [OPERATIONS] [FAVFS_BINARY]}
kind=${2:-dav}; ops=${3:-20000}
bin=${4:-$(swift build -c release --show-bin-path 2>/dev/null)/favfs}
[ -f "$xfs/ltp/fsx.c" ] || { echo "no $xfs/ltp/fsx.c: fetch kdave/xfstests first" >&2; exit 2; }
build=$(mktemp -d /tmp/favfs-fsx-build.XXXXXX)
# What configure would say: config.h only needs to name a few headers on glibc.
printf '#include <sys/stat.h>\n#include <assert.h>\n#include <sys/param.h>\n#include <getopt.h>\n#define HAVE_SYS_PRCTL_H 1\n' > "$build/config.h"
gcc -O2 -w -D_GNU_SOURCE -DNO_XFS -I"$build" -I"$xfs/include" -I"$xfs/src" -o "$build/fsx" "$xfs/ltp/fsx.c" || exit 2
. "$(dirname "$0")/suite-mount.sh"
suite_mount "$kind" "" "$bin"
mkdir -p "$MNT/fsx"
status=0
for variant in "mapped:-S 11" "plain:-S 12 -R -W"; do
    name=${variant%%:*} flags=${variant#*:}
    # shellcheck disable=SC2086 # flags are several options
    out=$(cd "$MNT/fsx" && timeout 1800 "$build/fsx" -q -N "$ops" -c 40 -l 4194304 -P "$W" $flags "$name.bin" 2>&1)
    rc=$?
    echo "fsx $name ($flags, $ops operations): exit $rc"
    [ $rc -eq 0 ] || { status=1; printf '%s\n' "$out" | tail -30; }
done
rm -rf "$build"
suite_check "$bin" || status=1
exit $status
