#!/bin/bash
# Asks tumbler (the thumbnailer Thunar and other file managers use) for the "normal"
# thumbnails of FILES, as Thunar does when it shows their folder, and waits SECONDS.
# Run it inside `dbus-run-session`, with XDG_CACHE_HOME set to the thumbnail cache to use.
# Usage: tumbler_queue.sh SECONDS FILE...
set -euo pipefail
seconds=$1; shift
tumblerd=$(ls /usr/lib/*/tumbler-1/tumblerd 2>/dev/null | head -1)
[ -x "$tumblerd" ] || { echo "tumblerd is not installed (apt install tumbler)" >&2; exit 2; }
"$tumblerd" > "${TUMBLER_LOG:-/dev/null}" 2>&1 &
trap 'kill $! 2>/dev/null' EXIT
uris="" mimes=""
for f in "$@"; do
    # The URI as GLib writes it (what the thumbnail's name and Thumb::URI are made of).
    u=$(python3 -c 'import sys, urllib.parse; print("file://" + urllib.parse.quote(sys.argv[1], safe="/!$&()*+,;=:@-._~" + chr(39)))' "$f")
    uris+="'${u//\'/\\\'}',"
    case "$f" in *.png) mimes+="'image/png',";; *) mimes+="'image/jpeg',";; esac
done
for _ in $(seq 50); do   # tumblerd takes its bus name once it has loaded its plugins
    gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.NameHasOwner org.freedesktop.thumbnails.Thumbnailer1 2>/dev/null | grep -q true && break
    sleep 0.1
done
gdbus call --session --dest org.freedesktop.thumbnails.Thumbnailer1 --object-path /org/freedesktop/thumbnails/Thumbnailer1 \
    --method org.freedesktop.thumbnails.Thumbnailer1.Queue "[${uris%,}]" "[${mimes%,}]" normal default 0
sleep "$seconds"
