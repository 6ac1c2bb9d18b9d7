#!/bin/sh
# Entry point for `make bench`: runs the favfs benchmark harness (see bench/README.md).
exec python3 "$(dirname "$0")/bench.py" "$@"
