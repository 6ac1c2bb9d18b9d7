# favfs — see README.md
SWIFT ?= swift
PREFIX ?= /usr/local

.PHONY: build release test install demo demo-stop bench clean

build:
	$(SWIFT) build

release:
	$(SWIFT) build -c release

# Builds once (the binary and every test target), then runs all suites: unit tests,
# provider tests against real servers, end-to-end tests through real mounts.
test:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

install: release
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/favfs" $(PREFIX)/bin/favfs

# A sample WebDAV server (Debian's Apache mod_dav on 127.0.0.1:8080) mounted on ./demo/Remote.
demo: build
	scripts/demo.sh start

demo-stop:
	scripts/demo.sh stop

bench: release
	bench/run.sh

clean:
	rm -rf .build demo
