#!/usr/bin/env bash
# The README's quick start, exactly as written, with port 8080 taken (the demo must never assume
# it is free): `make demo`, look at the mount, `make demo-stop`. CI runs it after `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "check-demo: FAILED: $*" >&2; exit 1; }

holder=""
if ! (echo > /dev/tcp/127.0.0.1/8080) 2>/dev/null; then
    python3 -c 'import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 8080)); s.listen(); time.sleep(3600)' &
    holder=$!
    sleep 0.5
fi
cleanup() { make demo-stop >/dev/null 2>&1 || true; [ -n "$holder" ] && kill "$holder" 2>/dev/null || true; }
trap cleanup EXIT

make demo
[ "$(cat demo/Remote/README.txt)" = "Hello from favfs" ] || fail "cat demo/Remote/README.txt"
[ "$(ls demo/Remote/photos | wc -l)" = 20 ] || fail "ls demo/Remote/photos: $(ls demo/Remote/photos)"
ls -l demo/Remote >/dev/null
make demo-stop
mountpoint -q demo/Remote && fail "make demo-stop left demo/Remote mounted"
echo "check-demo: make demo and make demo-stop work with port 8080 taken"

# As a plain user, whose PATH has no /usr/sbin (where apache2 is): a start whose mount fails
# leaves no Apache behind, and stop stops the one a start left running. (favfs is replaced by
# false/true here: what is checked is the script's handling of the server, not the mount.)
if id nobody >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    plain=$(mktemp -d /tmp/favfs-demo-plain.XXXXXX)
    mkdir -p "$plain/scripts" && cp scripts/demo.sh "$plain/scripts/" && chown -R nobody "$plain"
    as_nobody() { su nobody -s /bin/bash -c "export PATH=/usr/bin:/bin; cd $plain; $1"; }
    as_nobody "FAVFS=/bin/false bash scripts/demo.sh start" >/dev/null 2>&1 && fail "a demo start whose mount fails succeeded"
    pgrep -u nobody -x apache2 >/dev/null && fail "a failed demo start left Apache running as a plain user"
    as_nobody "FAVFS=/bin/true bash scripts/demo.sh start" >/dev/null || fail "the demo start as a plain user"
    pgrep -u nobody -x apache2 >/dev/null || fail "the demo start as a plain user did not start Apache"
    as_nobody "FAVFS=/bin/true bash scripts/demo.sh stop" | grep -qx "demo stopped" || fail "demo stop as a plain user"
    pgrep -u nobody -x apache2 >/dev/null && fail "demo stop as a plain user left Apache running"
    rm -rf "$plain"
    echo "check-demo: as a plain user, stop stops the server and a failed start leaves none"
fi
