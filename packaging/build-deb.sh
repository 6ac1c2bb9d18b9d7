#!/usr/bin/env bash
# Builds favfs_VERSION_ARCH.deb in the current folder from the release binary:
#   build-deb.sh BINARY MANPAGE
# Files as `make install PREFIX=/usr` puts them (the binary stripped), and Depends from the
# shared libraries the binary really links (dpkg-shlibdeps), plus fuse3 for fusermount3 and
# mount.fuse3. The Swift runtime is linked statically (make release), so no toolchain is needed.
set -euo pipefail
bin=$1 man=$2
here=$(cd "$(dirname "$0")" && pwd)
version=$("$bin" --version | head -1 | awk '{print $2}')
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/favfs_${version}_${arch}"

"$here/install-files.sh" "$bin" "$man" "$stage" /usr
strip --strip-unneeded "$stage/usr/bin/favfs"

# dpkg-shlibdeps wants a source package around the binary it analyses.
mkdir -p "$work/src/debian"
printf 'Source: favfs\n\nPackage: favfs\nArchitecture: any\n' > "$work/src/debian/control"
shlibs=$(cd "$work/src" && dpkg-shlibdeps -O "$stage/usr/bin/favfs" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build-deb: dpkg-shlibdeps found no libraries in $bin" >&2; exit 1; }
depends="$shlibs, fuse3"

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
mkdir -p "$stage/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    "$here/debian/control.in" > "$stage/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz --build "$stage" "favfs_${version}_${arch}.deb" >/dev/null
echo "favfs_${version}_${arch}.deb: $(du -h "favfs_${version}_${arch}.deb" | cut -f1), Depends: $depends"
