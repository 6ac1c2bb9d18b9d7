#!/usr/bin/env bash
# Tests the installed file manager actions against a real favfs mount:
#   test-desktop-actions.sh FILE
# FILE: a regular file in a favfs mount, not open and not changed here (left evicted and
# unpinned). favfs-file-action (what Dolphin and Thunar run) must pin, evict and show status
# inside the mount and refuse, running nothing, outside it; then the Nautilus extension's test.
# FILE_ACTION and NAUTILUS_EXTENSION name other copies (the source tree's); FAVFS another favfs.
set -euo pipefail
file=$(realpath -s -- "$1")
here=$(cd "$(dirname "$0")" && pwd)
action=${FILE_ACTION:-/usr/lib/favfs/favfs-file-action}
extension=${NAUTILUS_EXTENSION:-/usr/share/nautilus-python/extensions/favfs-nautilus.py}
fail() { echo "test-desktop-actions: FAILED: $*" >&2; exit 1; }
ok() { echo "test-desktop-actions: ok: $*"; }
# Extended attributes through Debian's python3: getfattr (package attr) may not be installed.
xattr() { /usr/bin/python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$1" "$2"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No desktop to show results on: they go to standard output and error.
run() { env -u DISPLAY -u WAYLAND_DISPLAY "$action" "$@"; }

out=$(run status "$file") || fail "favfs-file-action status exits $?: $out"
[[ "$out" == *$'\t'"$file" ]] || fail "favfs-file-action status printed: $out"
ok "status: $out"
out=$(run pin "$file") || fail "favfs-file-action pin exits $?: $out"
[ "$(xattr "$file" user.favfs.pin)" = 1 ] || fail "after pin, user.favfs.pin is $(xattr "$file" user.favfs.pin)"
ok "pin: user.favfs.pin is 1"
# Evict waits for nothing but what is open: the pinned download may still run, so try again.
for _ in $(seq 50); do
    out=$(run evict "$file" 2>&1) && break
    sleep 0.2
done
state=$(xattr "$file" user.favfs.state)
[ "$state" = placeholder ] || fail "after evict, user.favfs.state is '$state' ($out)"
[ "$(xattr "$file" user.favfs.pin)" = 0 ] || fail "evict left the pin"
ok "evict: user.favfs.state is placeholder, unpinned"

# Outside a mount, or no action: refused, and favfs (a stand-in that leaves a mark) never runs.
printf '#!/bin/sh\ntouch %q\n' "$work/ran" > "$work/favfs"
chmod +x "$work/favfs"
mountpoint=$(/usr/bin/python3 -c 'import os, sys
p = sys.argv[1]
while not os.path.ismount(p): p = os.path.dirname(p)
print(p)' "$file")
refused() {
    local status=0
    FAVFS="$work/favfs" run "$@" >/dev/null 2>&1 || status=$?
    [ "$status" != 0 ] || fail "favfs-file-action $* exits 0"
    [ ! -e "$work/ran" ] || fail "favfs-file-action $* ran favfs"
    ok "refused: $* (exit $status)"
}
refused pin /tmp
refused evict "$file" "$work"  # one path outside: none is done
refused status "${mountpoint}x"
refused pin "$mountpoint/../${mountpoint##*/}x"
refused unpin "$file"
refused pin

/usr/bin/python3 "$here/test-nautilus-extension.py" "$extension" "$file" || fail "the Nautilus extension's test"
echo "test-desktop-actions: all passed"
