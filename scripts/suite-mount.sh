# Sourced by scripts/pjdfstest.sh and scripts/fsx.sh: a favfs mount for an outside suite, and
# what the run did to the daemon afterwards.
#
#   suite_mount dav|smb|local EXTRA_MOUNT_OPTIONS BINARY   sets W (work folder), MNT, CACHE, PID
#   suite_check BINARY                                  prints the daemon's state; 0 when sound
#
# dav: a private Apache mod_dav on a free loopback port (as the tests start it); smb: a private
# Samba smbd likewise; local: a temp folder (file://). The trap removes everything when the script exits.

suite_cleanup() {
    fusermount3 -u "$W/mnt" 2>/dev/null
    [ -f "$W/st/httpd.conf" ] && /usr/sbin/apache2 -f "$W/st/httpd.conf" -k stop 2>/dev/null
    [ -f "$W/st/smbd.pgid" ] && kill -TERM -- "-$(cat "$W/st/smbd.pgid")" 2>/dev/null
    sleep 0.5; rm -rf "$W"
}

suite_mount() {
    local kind=$1 extra=$2 bin=$3 remote port mods
    W=$(mktemp -d /tmp/favfs-suite.XXXXXX); chmod 755 "$W"; mkdir -p "$W/data" "$W/st/lock" "$W/st/logs" "$W/mnt"
    MNT="$W/mnt" CACHE="$W/cache"
    trap suite_cleanup EXIT
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
    elif [ "$kind" = smb ]; then
        # Samba's defaults but for what a private instance needs (as the tests start it).
        port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
        mkdir -p "$W/st/private" "$W/st/lock" "$W/st/state" "$W/st/cache" "$W/st/pid" "$W/st/ncalrpc"
        echo "root = favfs" > "$W/st/users.map"
        cat > "$W/st/smb.conf" <<CONF
[global]
    smb ports = $port
    interfaces = 127.0.0.1
    bind interfaces only = yes
    disable netbios = yes
    private dir = $W/st/private
    lock directory = $W/st/lock
    state directory = $W/st/state
    cache directory = $W/st/cache
    pid directory = $W/st/pid
    ncalrpc dir = $W/st/ncalrpc
    log file = $W/st/logs/smbd.log
    passdb backend = tdbsam:$W/st/private/passdb.tdb
    username map = $W/st/users.map
    load printers = no
    printing = bsd
    printcap name = /dev/null
    disable spoolss = yes
[files]
    path = $W/data
    read only = no
CONF
        printf 'suite\nsuite\n' | smbpasswd -c "$W/st/smb.conf" -s -a root >/dev/null || exit 2
        setsid /usr/sbin/smbd --foreground --no-process-group --debug-stdout -d 1 --configfile="$W/st/smb.conf" \
            > "$W/st/logs/smbd.out" 2>&1 < /dev/null &
        echo $! > "$W/st/smbd.pgid"
        for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
        remote="smb://favfs@127.0.0.1:$port/files"
        echo suite | "$bin" mount "$MNT" --remote "$remote" --cache-dir "$CACHE" --password-stdin $extra >/dev/null || exit 2
        PID=$(pgrep -f "mount $MNT" | head -1)
        return
    else
        remote="file://$W/data"
    fi
    # shellcheck disable=SC2086 # EXTRA is zero or more options
    "$bin" mount "$MNT" --remote "$remote" --cache-dir "$CACHE" $extra >/dev/null || exit 2
    PID=$(pgrep -f "mount $MNT" | head -1)
}

suite_check() {
    local bin=$1 alive=yes malformed start unmounted check
    kill -0 "$PID" 2>/dev/null || alive=no
    malformed=$(grep -c malformed "$CACHE/favfs.log")
    start=$(date +%s); timeout 300 "$bin" unmount "$MNT" >/dev/null 2>&1; unmounted=$?
    check=$(sqlite3 -readonly "$CACHE/placeholders.sqlite" 'PRAGMA integrity_check' 2>&1 | head -1)
    echo "daemon alive after the run: $alive; 'malformed' in its log: $malformed; unmount: exit $unmounted after $(( $(date +%s) - start )) s; integrity_check: $check"
    [ "$alive" = yes ] && [ "$malformed" = 0 ] && [ "$check" = ok ] && [ "$unmounted" = 0 ]
}
