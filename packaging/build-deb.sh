#!/usr/bin/env bash
# Builds favfs_VERSION_ARCH.deb in the current folder from the release binary:
#   build-deb.sh BINARY MANPAGE
# Files as `make install PREFIX=/usr` puts them (the binary stripped), and Depends from the
# shared libraries the binary really links (dpkg-shlibdeps), plus fuse3 for fusermount3 and
# mount.fuse3. The Swift runtime is linked statically (make release), so no toolchain is needed.
set -euo pipefail
umask 022
bin=$1 man=$2
here=$(cd "$(dirname "$0")" && pwd)
# The version is the first word of --version's first line that starts with a digit
# ("favfs 0.1.0" or "0.1.0"); later lines name the libraries.
version_text=$("$bin" --version)
version=$(printf '%s\n' "${version_text%%$'\n'*}" | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]/) { print $i; exit }}')
version_re='^[0-9][A-Za-z0-9.+~]*$'
[[ "$version" =~ $version_re ]] || { echo "build-deb: no version in the first line of '$bin --version': ${version_text%%$'\n'*}" >&2; exit 1; }
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/favfs_${version}_${arch}"

"$here/install-files.sh" "$bin" "$man" "$stage" /usr
# As dh_strip does: symbols and debug info out, the binary works the same.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/favfs"
"$stage/usr/bin/favfs" --version >/dev/null || { echo "build-deb: the stripped binary does not run" >&2; exit 1; }

# dpkg-shlibdeps wants a source package around the binary it analyses.
mkdir -p "$work/src/debian"
printf 'Source: favfs\n\nPackage: favfs\nArchitecture: any\n' > "$work/src/debian/control"
if ! (cd "$work/src" && dpkg-shlibdeps -O "$stage/usr/bin/favfs") > "$work/shlibdeps" 2> "$work/shlibdeps.err"; then
    echo "build-deb: dpkg-shlibdeps failed:" >&2; cat "$work/shlibdeps.err" >&2; exit 1
fi
shlibs=$(sed -n 's/^shlibs:Depends=//p' "$work/shlibdeps")
[ -n "$shlibs" ] || { echo "build-deb: dpkg-shlibdeps found no libraries in $bin" >&2; cat "$work/shlibdeps.err" >&2; exit 1; }
depends="$shlibs, fuse3"

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
mkdir -p "$stage/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    "$here/debian/control.in" > "$stage/DEBIAN/control"
# md5sums, as dh_md5sums makes them: dpkg --verify favfs checks the installed files.
(cd "$stage" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
deb="favfs_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb: $(du -h "$deb" | cut -f1), Depends: $depends"
