#!/usr/bin/env bash
# ProFTPD for the tests, beside vsftpd: Debian packages the two as conflicting ftp-servers, so
# proftpd-core is downloaded (apt-get download, the same archive apt installs from) and
# unpacked into DEST instead of installed; the tests start DEST/usr/sbin/proftpd with the
# package's own configuration template. Its libraries come from `make setup`.
set -euo pipefail
dest=${1:-/opt/favfs-test/proftpd}
if [ -x "$dest/usr/sbin/proftpd" ] && "$dest/usr/sbin/proftpd" -v >/dev/null 2>&1; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
(cd "$work" && apt-get download -q proftpd-core)
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$work"/proftpd-core_*.deb "$dest"
"$dest/usr/sbin/proftpd" -v
