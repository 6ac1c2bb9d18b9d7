#!/usr/bin/env bash
# Quick start: serve a sample folder over WebDAV with Debian's Apache mod_dav on loopback and
# mount it with favfs. `scripts/demo.sh stop` unmounts and stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO="$PWD/demo"
FAVFS="${FAVFS:-$(swift build -c release --show-bin-path)/favfs}"
MNT="$DEMO/Remote"

# Apache lives in /usr/sbin, which is not on a plain user's PATH.
export PATH="$PATH:/usr/sbin:/sbin"
PIDFILE="$DEMO/server/httpd.pid"

apache_running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE" 2>/dev/null)" 2>/dev/null; }

stop_apache() {
    apache_running || return 0
    local pid
    pid=$(cat "$PIDFILE")
    apache2 -f "$DEMO/server/httpd.conf" -k stop 2>/dev/null || kill "$pid" 2>/dev/null || true
    # Until the process is gone, not just its pid file (removed as it begins to shut down).
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    echo "the demo's Apache (pid $pid) did not stop"
    return 1
}

stop() {
    "$FAVFS" unmount "$MNT" 2>/dev/null || true
    stop_apache || exit 1
    if mountpoint -q "$MNT" 2>/dev/null; then echo "$MNT is still mounted: favfs unmount $MNT"; exit 1; fi
    echo "demo stopped"
}

# A port nobody listens on (never assume 8080 is free): PORT=N overrides.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Debian builds mod_unixd and mod_log_config into apache2; other builds ship them as modules.
load_if_shared() {
    [ -f "$M/mod_$1.so" ] && echo "LoadModule $1_module $M/mod_$1.so" || true
}

start() {
    command -v apache2 >/dev/null || { echo "apache2 is missing: make setup (or apt-get install apache2)"; exit 1; }
    [ -x "$FAVFS" ] || { echo "no favfs binary at $FAVFS: make release"; exit 1; }
    if apache_running; then
        echo "the demo is running already: make demo-stop first"; exit 1
    fi
    PORT="${PORT:-$(free_port)}"
    # Fresh files and a fresh cache each time: the files are generated anew below.
    rm -rf "$DEMO/cache" "$DEMO/files"
    mkdir -p "$DEMO/server/lock" "$DEMO/server/docroot" "$DEMO/files/photos" "$DEMO/files/docs/deep/er" "$MNT"
    echo "Hello from favfs" > "$DEMO/files/README.txt"
    for i in $(seq 1 20); do head -c $((i * 50000)) /dev/urandom > "$DEMO/files/photos/photo $i.jpg"; done
    echo "a note" > "$DEMO/files/docs/deep/er/note.md"
    head -c $((64 << 20)) /dev/urandom > "$DEMO/files/big.bin"
    M=/usr/lib/apache2/modules
    # As root, Apache's workers must run as another user (www-data owns the served folder);
    # as a plain user they run as that user.
    USER_LINES=""
    [ "$(id -u)" = 0 ] && USER_LINES=$'User www-data\nGroup www-data'
    cat > "$DEMO/server/httpd.conf" <<CONF
ServerRoot "$DEMO/server"
ServerName 127.0.0.1
Listen 127.0.0.1:$PORT
PidFile $DEMO/server/httpd.pid
ErrorLog $DEMO/server/error.log
$USER_LINES
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule alias_module $M/mod_alias.so
LoadModule dav_module $M/mod_dav.so
LoadModule dav_fs_module $M/mod_dav_fs.so
$(load_if_shared unixd)
$(load_if_shared log_config)
LogFormat "%h %l %u %t \"%r\" %>s %b" common
CustomLog $DEMO/server/access.log common
DAVLockDB $DEMO/server/lock/DAVLock
DocumentRoot "$DEMO/server/docroot"
Alias /files "$DEMO/files"
<Directory "$DEMO/files">
    DAV On
    Require all granted
</Directory>
CONF
    if [ "$(id -u)" = 0 ]; then
        chown -R www-data:www-data "$DEMO/files" "$DEMO/server/lock"
        chmod 755 "$DEMO" "$DEMO/server"
    fi
    apache2 -f "$DEMO/server/httpd.conf" -k start
    for _ in $(seq 50); do
        curl -s -o /dev/null "http://127.0.0.1:$PORT/files/" && break
        sleep 0.1
    done
    # A failed mount leaves nothing running behind it (the next start would refuse).
    if ! "$FAVFS" mount "$MNT" --remote "dav://127.0.0.1:$PORT/files/" --cache-dir "$DEMO/cache"; then
        stop_apache || true
        echo "the mount failed (above); the demo's Apache is stopped again"
        exit 1
    fi
    echo
    echo "Serving $DEMO/files over WebDAV at http://127.0.0.1:$PORT/files/, mounted on $MNT"
    echo "Try:  ls -l $MNT   cat $MNT/README.txt   cp $MNT/big.bin /tmp/"
    echo "Stop: make demo-stop"
}

case "${1:-start}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop"; exit 2 ;;
esac
