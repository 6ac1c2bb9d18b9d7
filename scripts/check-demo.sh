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
