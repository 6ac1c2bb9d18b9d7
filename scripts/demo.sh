#!/usr/bin/env bash
# Quick start: serve a sample folder over WebDAV with Debian's Apache mod_dav on loopback and
# mount it with favfs. `scripts/demo.sh stop` unmounts and stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO="$PWD/demo"
PORT="${PORT:-8080}"
FAVFS="${FAVFS:-$(swift build --show-bin-path)/favfs}"
MNT="$DEMO/Remote"

stop() {
    "$FAVFS" unmount "$MNT" 2>/dev/null || true
    [ -f "$DEMO/server/httpd.conf" ] && apache2 -f "$DEMO/server/httpd.conf" -k stop 2>/dev/null || true
    echo "demo stopped"
}

start() {
    command -v apache2 >/dev/null || { echo "apache2 is missing: apt-get install apache2"; exit 1; }
    mkdir -p "$DEMO/server/lock" "$DEMO/server/docroot" "$DEMO/files/photos" "$DEMO/files/docs/deep/er" "$MNT"
    echo "Hello from favfs" > "$DEMO/files/README.txt"
    for i in $(seq 1 20); do head -c $((i * 50000)) /dev/urandom > "$DEMO/files/photos/photo $i.jpg"; done
    echo "a note" > "$DEMO/files/docs/deep/er/note.md"
    head -c $((64 << 20)) /dev/urandom > "$DEMO/files/big.bin"
    M=/usr/lib/apache2/modules
    cat > "$DEMO/server/httpd.conf" <<CONF
ServerRoot "$DEMO/server"
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile $DEMO/server/httpd.pid
ErrorLog $DEMO/server/error.log
User www-data
Group www-data
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule alias_module $M/mod_alias.so
LoadModule dav_module $M/mod_dav.so
LoadModule dav_fs_module $M/mod_dav_fs.so
LoadModule unixd_module $M/mod_unixd.so
LoadModule log_config_module $M/mod_log_config.so
CustomLog $DEMO/server/access.log common
DAVLockDB $DEMO/server/lock/DAVLock
DocumentRoot "$DEMO/server/docroot"
Alias /files "$DEMO/files"
<Directory "$DEMO/files">
    DAV On
    Require all granted
</Directory>
CONF
    # Apache's workers run as www-data: give them the served folder.
    chown -R www-data:www-data "$DEMO/files" "$DEMO/server/lock"
    chmod 755 "$DEMO" "$DEMO/server"
    apache2 -f "$DEMO/server/httpd.conf" -k start
    "$FAVFS" mount "$MNT" --remote "dav://127.0.0.1:$PORT/files/" --cache-dir "$DEMO/cache"
    echo
    echo "Try:  ls -l $MNT   cat $MNT/README.txt   cp $MNT/big.bin /tmp/"
    echo "Stop: make demo-stop"
}

case "${1:-start}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop"; exit 2 ;;
esac
