#!/usr/bin/env bash
# Runs pjdfstest (github.com/pjd/pjdfstest, built by you: autoreconf -ifs && ./configure && make
# pjdfstest) inside a favfs mount, folder by folder, as root, and prints per folder how many of
# its test files and assertions passed; then checks what the run did to the daemon: its log for
# SQLite's "malformed", the database with PRAGMA integrity_check, and that unmount returns.
#
#   usage: scripts/pjdfstest.sh PJDFSTEST_DIR [dav|local] [--allow-other] [FAVFS_BINARY]
#
# dav: a private Apache mod_dav on a free loopback port (as the tests start it); local: a temp
# folder (file://). Exit status 1 when the daemon's database was damaged or the daemon died.
set -u
pjd=${1:?usage: scripts/pjdfstest.sh PJDFSTEST_DIR [dav|local] [--allow-other] [FAVFS_BINARY]}
kind=${2:-dav}; extra=""; [ "${3:-}" = "--allow-other" ] && extra="--allow-other"
bin=${4:-$(swift build -c release --show-bin-path 2>/dev/null)/favfs}
[ -x "$pjd/pjdfstest" ] || { echo "no $pjd/pjdfstest: build it first" >&2; exit 2; }
W=$(mktemp -d /tmp/favfs-pjd.XXXXXX); chmod 755 "$W"; mkdir -p "$W/data" "$W/st/lock" "$W/st/logs" "$W/mnt"
cleanup() {
    fusermount3 -u "$W/mnt" 2>/dev/null
    [ -f "$W/st/httpd.conf" ] && /usr/sbin/apache2 -f "$W/st/httpd.conf" -k stop 2>/dev/null
    sleep 0.5; rm -rf "$W"
}
trap cleanup EXIT
if [ "$kind" = dav ]; then
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    mods=/usr/lib/apache2/modules
    cat > "$W/st/httpd.conf" <<CONF
ServerRoot "$W/st"
ServerName 127.0.0.1
PidFile "$W/st/httpd.pid"
Listen 127.0.0.1:$port
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule dav_module $mods/mod_dav.so
LoadModule dav_fs_module $mods/mod_dav_fs.so
User www-data
Group www-data
ErrorLog "$W/st/logs/error.log"
DavLockDB "$W/st/lock/DavLock"
DocumentRoot "$W/data"
<Directory "$W/data">
  Dav On
  Require all granted
</Directory>
CONF
    chown -R www-data:www-data "$W/data" "$W/st/lock"
    /usr/sbin/apache2 -f "$W/st/httpd.conf" -k start || exit 2
    remote="dav://127.0.0.1:$port/"
else
    remote="file://$W/data"
fi
"$bin" mount "$W/mnt" --remote "$remote" --cache-dir "$W/cache" $extra >/dev/null || exit 2
pid=$(pgrep -f "mount $W/mnt" | head -1)
mkdir -p "$W/mnt/pjd"
total_files=0; total_ok=0; total_asserts=0; total_failed=0
printf '%-12s %12s %18s\n' folder "files ok" "assertions failed"
for dir in "$pjd"/tests/*/; do
    name=$(basename "$dir")
    out=$(cd "$W/mnt/pjd" && timeout 1200 prove -r "$dir" 2>&1)
    files=$(printf '%s\n' "$out" | grep -cE '\.t \.+ ')
    ok=$(printf '%s\n' "$out" | grep -cE '\.t \.+ ok')
    asserts=$(printf '%s\n' "$out" | sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p')
    failed=$(printf '%s\n' "$out" | grep -oE 'Tests: [0-9]+ Failed: [0-9]+\)' | awk '{s+=$4} END {print s+0}')
    printf '%-12s %5s of %-5s %8s of %-6s\n' "$name" "$ok" "$files" "$failed" "${asserts:-0}"
    total_files=$((total_files + files)); total_ok=$((total_ok + ok))
    total_asserts=$((total_asserts + ${asserts:-0})); total_failed=$((total_failed + failed))
done
printf '%-12s %5s of %-5s %8s of %-6s\n' all "$total_ok" "$total_files" "$total_failed" "$total_asserts"
alive=yes; kill -0 "$pid" 2>/dev/null || alive=no
malformed=$(grep -c malformed "$W/cache/favfs.log")
start=$(date +%s); timeout 300 "$bin" unmount "$W/mnt" >/dev/null 2>&1; unmounted=$?
check=$(sqlite3 -readonly "$W/cache/placeholders.sqlite" 'PRAGMA integrity_check' 2>&1 | head -1)
echo "daemon alive after the run: $alive; 'malformed' in its log: $malformed; unmount: exit $unmounted after $(( $(date +%s) - start )) s; integrity_check: $check"
[ "$alive" = yes ] && [ "$malformed" = 0 ] && [ "$check" = ok ]
