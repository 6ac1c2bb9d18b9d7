#!/usr/bin/env bash
# Checks an installed favfs package the way a user meets it (CI runs it as root after
# `make deb` and `apt-get install ./favfs_*.deb`): the binary, the man page, completion, the
# systemd unit, the file manager actions, `mount -t fuse.favfs`, and an /etc/fstab line a plain
# user mounts.
set -euo pipefail
fail() { echo "check-installed: FAILED: $*" >&2; exit 1; }
ok() { echo "check-installed: ok: $*"; }
# Whether a path is a mount point, from the mount table: root may not stat another user's FUSE
# mount (no allow_other: EACCES), so mountpoint(1) would say no.
mounted() { awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts; }

[ "$(id -u)" = 0 ] || fail "run as root (it edits /etc/fstab and adds a user)"
work=$(mktemp -d /tmp/favfs-check-XXXXXX)
chmod 0755 "$work"
fstab_backup="$work/fstab.orig"
cp /etc/fstab "$fstab_backup" 2>/dev/null || : > "$fstab_backup"
fuse_mode=$(stat -c %a /dev/fuse)
# The plain user's mount point, one per run: a mount another run left behind does not get in the way.
umnt=/home/favfsci/mnt-${work##*/favfs-check-}
cleanup() {
    set +e  # restore everything, even if one step fails
    cp "$fstab_backup" /etc/fstab
    chmod "$fuse_mode" /dev/fuse
    [ -x /home/favfsci/favfs-demo/scripts/demo.sh ] && runuser -u favfsci -- env FAVFS=/usr/bin/favfs /home/favfsci/favfs-demo/scripts/demo.sh stop >/dev/null 2>&1
    for m in "$work/mnt" "$umnt" /home/favfsci/favfs-demo/demo/Remote; do
        mounted "$m" && { umount "$m" 2>/dev/null || fusermount3 -u -z "$m" 2>/dev/null || true; }
    done
    rmdir "$umnt" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The package: its files, its Depends, its checksums.
dpkg -s favfs 2>/dev/null | grep -q '^Status: install ok installed' || fail "the package favfs is not installed"
files=$(dpkg -L favfs)
for f in /usr/bin/favfs /usr/share/man/man1/favfs.1.gz /usr/share/bash-completion/completions/favfs \
    /usr/share/zsh/vendor-completions/_favfs /usr/share/fish/vendor_completions.d/favfs.fish \
    /usr/lib/systemd/user/favfs@.service /usr/share/doc/favfs/README.md /usr/share/doc/favfs/changelog.gz \
    /usr/share/doc/favfs/copyright /usr/lib/favfs/favfs-file-action \
    /usr/share/nautilus-python/extensions/favfs-nautilus.py /usr/share/kio/servicemenus/favfs.desktop \
    /usr/share/favfs/thunar/favfs-uca.xml; do
    grep -qx "$f" <<< "$files" || fail "the package lacks $f"
done
depends=$(dpkg-query -W -f '${Depends}' favfs)
for d in fuse3 libfuse3-3 libcurl4 libsqlite3-0 libxml2 libjpeg62-turbo libpng16-16 libsmbclient libc6; do
    [[ ", $depends," == *", $d "* || ", $depends," == *", $d,"* ]] || fail "Depends lacks $d: $depends"
done
dpkg --verify favfs || fail "dpkg --verify favfs: installed files differ from the package's md5sums"
ok "package: $(wc -l <<< "$files") paths, Depends: $depends"

# The binary, from the package, on PATH, stripped, with its libraries.
[ "$(command -v favfs)" = /usr/bin/favfs ] || fail "favfs is not /usr/bin/favfs"
version_text=$(favfs --version) || fail "favfs --version exits $?"
version_line=${version_text%%$'\n'*}
[[ "$version_line" =~ ^(favfs\ )?[0-9]+\.[0-9] ]] || fail "favfs --version: first line '$version_line' names no version"
libs=$(ldd /usr/bin/favfs)
grep -q 'not found' <<< "$libs" && fail "missing libraries: $(grep 'not found' <<< "$libs")"
grep -q swift <<< "$libs" && fail "the packaged binary links the Swift runtime dynamically"
readelf -S -W /usr/bin/favfs | grep -q ' \.symtab ' && fail "/usr/bin/favfs is not stripped"
readelf -d /usr/bin/favfs | grep -q 'FLAGS.*\bNOW\b' || fail "/usr/bin/favfs is not linked with -z now (bindnow)"
readelf -l -W /usr/bin/favfs | grep -q GNU_RELRO || fail "/usr/bin/favfs has no RELRO segment"
deb=$(ls -t "$(dirname "$0")"/../favfs_*.deb 2>/dev/null | head -1 || true)  # none: nothing to compare
if [ -n "$deb" ]; then
    cmp -s <(dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -xO ./usr/bin/favfs) /usr/bin/favfs \
        || fail "/usr/bin/favfs is not the binary of $deb (install it with apt-get install --reinstall)"
fi
ok "$version_line, stripped, no Swift runtime needed"

# The man page: found, and it renders without warnings.
[ "$(man -w favfs)" = /usr/share/man/man1/favfs.1.gz ] || fail "man -w favfs: $(man -w favfs 2>&1)"
warnings=$(MANWIDTH=80 man --warnings -P cat favfs 2>&1 >/dev/null) || true
[ -z "$warnings" ] || fail "man favfs warns: $warnings"
# Rendered once into a variable: grep -q on a pipe would end man early (SIGPIPE, and pipefail).
page=$(MANWIDTH=80 man -P cat favfs 2>/dev/null) || fail "man favfs does not render"
for s in 'MOUNT HELPER AND FSTAB' SYSTEMD FILES 'EXIT STATUS' 'SEE ALSO'; do
    grep -q "^$s" <<< "$page" || fail "man favfs lacks the hand-written section $s"
done
grep -q -- '--cache-size' <<< "$page" || fail "man favfs lacks the generated options"
# make-man.py's additions: the command forms, the examples section, each option's default.
grep -q 'favfs mount mountpoint' <<< "$page" || fail "man favfs: the SYNOPSIS lacks the mount form"
grep -q '^EXAMPLES' <<< "$page" || fail "man favfs lacks EXAMPLES"
grep -q 'Default: 10G\.' <<< "$page" || fail "man favfs does not show --cache-size's default"
grep -q 'dav://nas.local:8080/files/' <<< "$page" || fail "man favfs breaks the example URLs"
ok "man favfs"

# Completion: bash completes `favfs mo` to mount; zsh and fish files are where they look.
got=$(bash -c 'source /usr/share/bash-completion/completions/favfs; COMP_WORDS=(favfs mo); COMP_CWORD=1; COMP_LINE="favfs mo"; COMP_POINT=8; _favfs favfs mo favfs; echo "${COMPREPLY[*]}"')
[ "$got" = mount ] || fail "bash completion of 'favfs mo' gave '$got'"
# bash-completion's loader finds it by the command's name, as an interactive shell does.
if [ -r /usr/share/bash-completion/bash_completion ]; then
    loaded=$(bash -c 'source /usr/share/bash-completion/bash_completion; _completion_loader favfs; complete -p favfs' 2>&1) || true
    [[ "$loaded" == *"-F _favfs favfs"* ]] || fail "bash-completion does not load /usr/share/bash-completion/completions/favfs: $loaded"
fi
[ -s /usr/share/zsh/vendor-completions/_favfs ] || fail "no zsh completion"
[ -s /usr/share/fish/vendor_completions.d/favfs.fish ] || fail "no fish completion"
ok "completion (bash: favfs mo -> $got)"

# The systemd user unit parses (as an instance) and names what it runs.
unit="$work/favfs@nas.service"
cp /usr/lib/systemd/user/favfs@.service "$unit"
if command -v systemd-analyze >/dev/null; then
    out=$(systemd-analyze verify "$unit" 2>&1 | grep -v 'Failed to lookup\|Failed to initialize\|RuntimeDirectory' || true)
    [ -z "$out" ] || fail "systemd-analyze verify favfs@.service: $out"
fi
grep -q '^Type=notify' "$unit" || fail "the unit is not Type=notify"
grep -q '^RestartPreventExitStatus=64 65 77 78$' "$unit" || fail "the unit restarts on a configuration error"
ok "systemd unit favfs@.service"

# The file manager actions: each file where its file manager looks, and well formed; what they
# do is tested on the mount below.
[ -x /usr/lib/favfs/favfs-file-action ] || fail "/usr/lib/favfs/favfs-file-action is not executable"
# KDE runs a service menu that root owns (or that is executable): KDesktopFile::isAuthorizedDesktopFile.
[ "$(stat -c %U /usr/share/kio/servicemenus/favfs.desktop)" = root ] || fail "the service menu is not root's"
if command -v desktop-file-validate >/dev/null; then
    # It knows Type=Application only: Type=Service's MimeType and Actions, and KDE's all/all,
    # are errors to it and what KIO reads.
    out=$(desktop-file-validate /usr/share/kio/servicemenus/favfs.desktop 2>&1 \
        | grep -v -e 'but the type is "Service" while this key is only valid for type "Application"' \
            -e 'contains value "all/all" which is an invalid MIME type' || true)
    [ -z "$out" ] || fail "desktop-file-validate favfs.desktop: $out"
fi
for exec in pin evict status; do
    grep -qx "Exec=/usr/lib/favfs/favfs-file-action $exec %F" /usr/share/kio/servicemenus/favfs.desktop \
        || fail "the service menu does not run favfs-file-action $exec %F"
done
commands=$(/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as T
print("\n".join(a.findtext("command") for a in T.parse(sys.argv[1]).getroot().iter("action")))' \
    /usr/share/favfs/thunar/favfs-uca.xml) || fail "favfs-uca.xml is not well-formed XML"
[ "$commands" = "$(printf '/usr/lib/favfs/favfs-file-action %s %%F\n' pin evict status)" ] \
    || fail "Thunar's actions run: $commands"
# Compiled into a cache of its own: no __pycache__ left among the package's files.
PYTHONPYCACHEPREFIX="$work/pycache" /usr/bin/python3 -m py_compile /usr/share/nautilus-python/extensions/favfs-nautilus.py \
    || fail "the Nautilus extension does not compile"
ok "file manager actions: Nautilus, Dolphin, Thunar"

# mount -t fuse.favfs (through mount.fuse3), as root.
mkdir -p "$work/src/sub" "$work/mnt"
echo hello > "$work/src/hello.txt"
chmod -R a+rX "$work/src"
mount -t fuse.favfs "file://$work/src" "$work/mnt" -o "cache_dir=$work/cache,ro,nosuid,nodev" || fail "mount -t fuse.favfs"
[ "$(cat "$work/mnt/hello.txt")" = hello ] || fail "reading through mount -t fuse.favfs"
touch "$work/mnt/new" 2>/dev/null && fail "ro was not applied"
grep -q " $work/mnt fuse.favfs " /proc/mounts || fail "not in /proc/mounts as fuse.favfs"
# The file manager actions on this mount: favfs-file-action pins, evicts and refuses paths outside;
# the Nautilus extension's menu and emblems (with python3-nautilus, its providers too).
out=$("$(dirname "$0")/desktop/test-desktop-actions.sh" "$work/mnt/hello.txt" 2>&1) \
    || fail "the file manager actions on a mount (packaging/desktop/test-desktop-actions.sh): $out"
providers=tested
grep -q 'skipped the providers' <<< "$out" && providers="skipped (no python3-nautilus)"
ok "file manager actions on a mount: pin, evict, status, refused outside; Nautilus providers $providers"
umount "$work/mnt" || fail "umount"
mounted "$work/mnt" && fail "umount left the mount"
for _ in $(seq 50); do pgrep -f "favfs mount $work/mnt" >/dev/null || break; sleep 0.1; done
ok "mount -t fuse.favfs and umount"

# An /etc/fstab line with noauto,user: a plain user mounts it in their home, as on a desktop
# (/dev/fuse usable by everyone, fusermount3 setuid).
id favfsci >/dev/null 2>&1 || useradd -m favfsci
chmod 0666 /dev/fuse
runuser -u favfsci -- mkdir -p "$umnt"
install -d -o favfsci -m 0700 "$work/usercache"
echo "file://$work/src $umnt fuse.favfs noauto,user,cache_dir=$work/usercache,umask=022 0 0" >> /etc/fstab
runuser -u favfsci -- mount "$umnt" || fail "a plain user's mount from /etc/fstab"
grep -q " $umnt fuse.favfs .*user_id=$(id -u favfsci)" /proc/mounts || fail "the fstab mount is not the user's: $(grep favfsci /proc/mounts)"
[ "$(runuser -u favfsci -- cat "$umnt/hello.txt")" = hello ] || fail "the user reading through their fstab mount"
runuser -u favfsci -- favfs status --json | grep -q "\"mountpoint\" : \"$umnt\"" || fail "favfs status --json as the user"
runuser -u favfsci -- favfs unmount "$umnt" || fail "favfs unmount by the user"
mounted "$umnt" && fail "favfs unmount left the fstab mount"
# Again, unmounted with umount(8) as the user, as a desktop user would.
runuser -u favfsci -- mount "$umnt" || fail "a plain user's second mount from /etc/fstab"
runuser -u favfsci -- umount "$umnt" || fail "umount by the user"
mounted "$umnt" && fail "umount by the user left the mount"
ok "an /etc/fstab line mounted and unmounted by a plain user"
# The demo as a plain user (Apache on a free port as that user, the mount through fusermount3),
# with the packaged binary: what `make demo` runs after building.
here=$(cd "$(dirname "$0")" && pwd)
demo=/home/favfsci/favfs-demo
rm -rf "$demo"
runuser -u favfsci -- mkdir -p "$demo/scripts"
install -m 0755 -o favfsci "$here/../scripts/demo.sh" "$demo/scripts/demo.sh"
runuser -u favfsci -- env FAVFS=/usr/bin/favfs "$demo/scripts/demo.sh" start >/dev/null || fail "the demo as a plain user"
[ "$(runuser -u favfsci -- cat "$demo/demo/Remote/README.txt")" = "Hello from favfs" ] || fail "reading the demo as a plain user"
runuser -u favfsci -- env FAVFS=/usr/bin/favfs "$demo/scripts/demo.sh" stop >/dev/null
mounted "$demo/demo/Remote" && fail "the demo's stop left its mount"
rm -rf "$demo"
ok "the demo as a plain user"
echo "check-installed: all checks passed"
