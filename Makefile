# favfs — see README.md
SWIFT ?= swift
# bash: the test recipe needs pipefail.
SHELL := /bin/bash
PREFIX ?= /usr/local
# The binary users install: optimised, with the Swift runtime linked in (--static-swift-stdlib),
# so it needs only Debian's libfuse3, libcurl, libsqlite3 and libxml2. The tests mount this one.
# -z now (with the default RELRO): the whole GOT read-only after start (Debian's "bindnow" hardening).
RELEASE_FLAGS = -c release --static-swift-stdlib --product favfs -Xlinker -z -Xlinker now
RELEASE_BIN = $$($(SWIFT) build -c release --show-bin-path)/favfs

.PHONY: setup build release man test check sanitize install deb demo demo-stop bench clean

# Every Debian and PyPI package the build, the demo and the tests need (run as root; CI runs it too).
# Build: FUSE, libcurl, SQLite, libxml2 (WebDAV listings), libjpeg-turbo and libpng (thumbnails). Test servers, one per provider: Apache mod_dav and autoindex
# (WebDAV, HTTP index), nginx (HTTP index; with dav-ext, a second WebDAV server), vsftpd (a second
# FTP server), OpenSSH (SFTP), openssl (FTPS certificates); sqlite3 and gcc for the integrity tests
# (the database's own check; a libfuse probe and a signal storm built from Tests/Fixtures);
# Pillow (the Favart fixture's previews) from Debian; from PyPI: moto_server (S3, pinned: the test
# launcher adjusts how this version checks signatures), pyftpdlib (FTP/FTPS: Debian's 1.5.7 resets
# curl's TLS data connections, pyftpdlib issue 604, fixed upstream since) and pyOpenSSL (FTPS:
# moto[server] needs cryptography >= 45, through joserfc, which Debian's pyOpenSSL 23 cannot use).
# Packaging and its check: dpkg-dev (dpkg-shlibdeps), binutils (strip, readelf), man-db,
# bash-completion (its loader), passwd (useradd), util-linux (runuser), strace (counts what
# `ls -l` asks of a mount), rsync, libglib2.0-bin (`gio monitor`: GLib's folder watcher, as file managers use it);
# desktop-file-utils and python3-nautilus (check-installed's checks of the file manager actions);
# a real file manager for the live-desktop tests: Thunar (with xfconf for its settings) on Xvfb,
# read through AT-SPI (python3-pyatspi, at-spi2-core), and tumbler, its thumbnailer, each on a
# private session bus (dbus-run-session, from dbus-daemon).
#
# Debian's python3 is "externally managed" (PEP 668): pip refuses to install into it. So what
# Debian lacks or has too old (moto, which brings boto3; pyftpdlib, pyOpenSSL) goes into a virtual
# environment of Debian's python3, $(VENV) (git ignores it), that also sees Debian's packages
# (--system-site-packages). The tests run their Python servers with its python3
# (Tests/TestSupport/TestPython.swift). Running setup again reuses it; one made otherwise
# (another python3, or without Debian's packages) is made anew.
VENV = .venv
setup:
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	    libfuse3-dev fuse3 libcurl4-openssl-dev libsqlite3-dev libxml2-dev libjpeg62-turbo-dev libpng-dev libsmbclient-dev pkg-config \
	    apache2 apache2-utils nginx libnginx-mod-http-dav-ext vsftpd samba openssh-server openssh-client openssl curl ca-certificates \
	    sqlite3 gcc libc6-dev libhiredis0.14 libmemcached11 libmemcachedutil2 \
	    python3 python3-venv python3-pil \
	    dpkg-dev binutils xz-utils man-db groff-base bash-completion passwd util-linux strace rsync libglib2.0-bin \
	    desktop-file-utils python3-nautilus thunar xfconf tumbler xvfb python3-pyatspi at-spi2-core dbus-daemon
	scripts/fetch-proftpd.sh /opt/favfs-test/proftpd
	grep -qsx 'home = /usr/bin' $(VENV)/pyvenv.cfg && grep -qsx 'include-system-site-packages = true' $(VENV)/pyvenv.cfg \
	    || /usr/bin/python3 -m venv --clear --system-site-packages $(VENV)
	$(VENV)/bin/python3 -m pip install -q --disable-pip-version-check 'moto[server]==5.2.1' 'pyftpdlib>=2' 'pyopenssl>=25.1' 'wsgidav==4.4.0' 'cheroot>=10'
	$(VENV)/bin/python3 -c 'import moto.server, boto3, pyftpdlib, OpenSSL, PIL, wsgidav, cheroot'

build:
	$(SWIFT) build

release:
	$(SWIFT) build $(RELEASE_FLAGS)

# Source checks the compiler does not make: no pointer escapes its withUnsafe… closure.
check:
	scripts/check-unsafe-pointers.sh

# Builds the release binary (what users install) and, once, every test target; then runs all
# suites: unit tests, provider tests against real servers, and end-to-end tests that mount the
# release binary (FAVFS_BIN) and drive it with ordinary programs.
# The whole output goes to .build/test.log too; when a test fails, its failure lines are printed
# again at the end, where a reader of a long log (or of its last lines) finds them.
test: check release
	$(SWIFT) build --build-tests
	set -o pipefail; FAVFS_BIN="$(RELEASE_BIN)" $(SWIFT) test --skip-build 2>&1 | tee .build/test.log \
	    || { echo "== failures (all output: .build/test.log)"; \
	         grep -E ': error: |^Test Case .* failed|✘' .build/test.log | tail -n 80; exit 1; }

# The core's tests and its reference model (no FUSE, no servers) under ThreadSanitizer, then
# AddressSanitizer, each in a build folder of its own; fails on any report. Not part of `test`
# (the two builds take several minutes); run it after changing the core's concurrency.
# Leaks are not checked: XCTest keeps its test cases and Foundation leaks buffers of its own
# (readBytesFromFile), so LeakSanitizer reports what is not ours.
SANITIZE_TESTS = FavFSCoreTests|FUSEBridgeTests|ReferenceModelTests
sanitize:
	for s in thread address; do \
	    $(SWIFT) build --build-tests --sanitize=$$s --scratch-path .build/sanitize-$$s || exit 1; \
	    set -o pipefail; ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --sanitize=$$s --scratch-path .build/sanitize-$$s \
	        --filter '$(SANITIZE_TESTS)' 2>&1 | tee .build/sanitize-$$s.log || exit 1; \
	    ! grep -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer' .build/sanitize-$$s.log || exit 1; \
	done

# The man page: what swift-argument-parser generates from the command line (its GenerateManual
# plugin, on the debug build the tests use), with the hand-written sections of
# packaging/favfs.1.sections (behaviour, fstab, systemd, files, exit statuses).
MAN_PAGE = .build/man/favfs.1
man: release
	$(SWIFT) package generate-manual --configuration debug --date "$$(git log -1 --format=%cs 2>/dev/null || date +%F)" --authors "favfs developers"
	mkdir -p .build/man
	packaging/make-man.py .build/plugins/GenerateManual/outputs/favfs/favfs.1 packaging/favfs.1.sections $(MAN_PAGE) "$(RELEASE_BIN)"

# The binary, man page, completions (bash, zsh, fish) and the systemd user unit; the same set
# the package installs. PREFIX=/usr/local by default; DESTDIR for staging.
install: release man
	packaging/install-files.sh "$(RELEASE_BIN)" $(MAN_PAGE) "$(DESTDIR)" "$(PREFIX)"

# favfs_VERSION_ARCH.deb in this folder (dpkg-deb; Depends from the libraries the binary links).
deb: release man
	packaging/build-deb.sh "$(RELEASE_BIN)" $(MAN_PAGE)

# A sample WebDAV server (Debian's Apache mod_dav on a free loopback port) mounted on ./demo/Remote.
demo: release
	scripts/demo.sh start

demo-stop:
	scripts/demo.sh stop

bench: release
	bench/run.sh

clean:
	rm -rf .build demo favfs_*.deb $(VENV)
