#!/usr/bin/env python3
"""Measures reads from inside a child process, so process start-up is not in the timing
and the harness can kill it (with a timeout) if a mount hangs.

    probe.py read PATH...   read each file to the end (in parallel threads if several)
    probe.py ttfb PATH      open and read one byte

Prints one JSON object: {"bytes": N, "seconds": S}.
"""
import json
import os
import sys
import threading
import time

BUF = 1 << 20  # 1 MiB reads: large enough that Python's overhead is noise


def read_all(path, counts, i):
    buf = bytearray(BUF)
    view = memoryview(buf)
    total = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(view)
            if not n:
                break
            total += n
    counts[i] = total


def main():
    cmd, paths = sys.argv[1], sys.argv[2:]
    if cmd == "ttfb":
        t0 = time.perf_counter()
        with open(paths[0], "rb", buffering=0) as f:
            got = len(f.read(1))
        print(json.dumps({"bytes": got, "seconds": time.perf_counter() - t0}))
        return
    if cmd != "read":
        sys.exit(f"unknown command {cmd}")
    counts = [0] * len(paths)
    threads = [threading.Thread(target=read_all, args=(p, counts, i)) for i, p in enumerate(paths)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    if any(c == 0 for c in counts):
        sys.exit(f"a reader got no bytes: {counts}")
    print(json.dumps({"bytes": sum(counts), "seconds": seconds}))


if __name__ == "__main__":
    main()
