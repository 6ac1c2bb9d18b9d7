#!/usr/bin/env python3
"""Where the time of copying many small files goes (README, "Small files, and where the limit is").

Serves the bench data set with Apache, mounts favfs and copies the `write_small` source (2,000
files of 100 B-60 KB; run `bench/run.sh --cases write_small_2000` once to generate it) with
`cp -r`, timed until every file is on the server; then PUTs the same files with curl one after
another and 8 at a time. Prints wall time, CPU of favfs and of Apache, how busy the machine was,
and favfs's context switches; `--strace` counts favfs's system calls instead (slower), `--perf`
samples favfs's CPU with `perf record` and prints where it went (by library and by function).

Usage (root): bench/small-files.py [--runs N] [--strace | --perf] [FAVFS_BINARY ...]
Given several binaries (two builds to compare), each run copies with each of them in turn.

Nothing is deleted while it runs: caches and copies go to WORKDIR/trash, emptied at the end
(see bench/README.md on this VM's ext4).
"""
import argparse
import os
import pwd
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from favbench import proc  # noqa: E402
from favbench.mounts import FavfsMount, cleanup_all  # noqa: E402
from favbench.server import ApacheServer  # noqa: E402

W = "/tmp/favfs-bench"


def cpu_of(pids):
    total = 0.0
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def busy():
    f = open("/proc/stat").readline().split()
    return (sum(int(x) for x in f[1:4]) + sum(int(x) for x in f[6:9])) / os.sysconf("SC_CLK_TCK")


def switches(pid):
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if "ctxt_switches" in line:
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--strace", action="store_true")
    p.add_argument("--perf", action="store_true")
    p.add_argument("binaries", nargs="*", default=[os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.build/release/favfs")])
    args = p.parse_args()
    src = f"{W}/write-sources/small-2000"
    if not os.path.exists(src + ".ready"):
        sys.exit(f"no {src}: run bench/run.sh --cases write_small_2000 once")
    names = sorted(os.listdir(src))
    proc.TRASH = f"{W}/trash"
    srv = ApacheServer(f"{W}/apache-small", f"{W}/files")
    srv.start()
    apache = lambda: [int(x) for x in subprocess.run(["pgrep", "-f", "apache-small"], capture_output=True, text=True).stdout.split()]
    try:
        up = f"{W}/files/uploads"
        for run, binary in ((r, b) for r in range(args.runs) for b in args.binaries):
            proc.discard(up)
            os.makedirs(up)
            www = pwd.getpwnam("www-data")
            os.chown(up, www.pw_uid, www.pw_gid)
            m = FavfsMount(os.path.abspath(binary), srv.dav_url, f"{W}/small-mnt", f"{W}/small-cache-{run}-{time.time()}")
            m.mount()
            os.listdir(m.path("uploads"))
            for n in names:
                open(os.path.join(src, n), "rb").read()
            expected = [(f"{up}/s/{n}", os.path.getsize(f"{src}/{n}")) for n in names]
            tracer = None
            if args.strace:
                tracer = subprocess.Popen(["strace", "-f", "-qq", "-c", "-o", f"{W}/small-strace.txt", "-p", str(m.pid)])
                time.sleep(0.5)
            elif args.perf:
                tracer = subprocess.Popen(["perf", "record", "-q", "-F", "2000", "-g", "-o", f"{W}/small-perf.data", "-p", str(m.pid)])
                time.sleep(0.5)
            a0, b0, c0, s0, t0 = cpu_of(apache()), busy(), m.cpu_seconds(), switches(m.pid), time.perf_counter()
            subprocess.run(["cp", "-r", src, m.path("uploads/s")], check=True)
            copied = time.perf_counter() - t0
            while not all(os.path.exists(q) and os.stat(q).st_size == n for q, n in expected):
                time.sleep(0.02)
            t = time.perf_counter() - t0
            print(f"favfs ({binary}) cp -r: {t:.2f} s (cp returned after {copied:.2f} s); favfs CPU {m.cpu_seconds() - c0:.2f} s, Apache CPU {cpu_of(apache()) - a0:.2f} s, "
                  f"machine busy {busy() - b0:.2f} of {2 * t:.2f} s; favfs context switches {switches(m.pid) - s0}")
            if tracer:
                tracer.send_signal(2)
                tracer.wait()
                if args.strace:
                    print(open(f"{W}/small-strace.txt").read())
                else:
                    for sort in ("comm", "dso", "sym"):
                        report = subprocess.run(["perf", "report", "-i", f"{W}/small-perf.data", "--no-children", "--stdio",
                                                 "-g", "none", "--percent-limit", "1", "--sort", sort],
                                                capture_output=True, text=True).stdout
                        print("\n".join(l for l in report.splitlines() if l and not l.startswith("#")))
            m.unmount(keep_cache=True)
            proc.discard(m.cache_dir)
            for parallel in ([], ["--parallel", "--parallel-max", "8"]):
                config = f"{W}/small-put.curl"
                with open(config, "w") as f:
                    f.write('header = "Expect:"\n')
                    for n in names:
                        f.write(f'upload-file = "{src}/{n}"\nurl = "{srv.url}uploads/c/{n}"\n')
                proc.discard(f"{up}/c")
                subprocess.run(["curl", "-sS", "-o", "/dev/null", "-X", "MKCOL", f"{srv.url}uploads/c/"], check=True)
                a0, b0, t0 = cpu_of(apache()), busy(), time.perf_counter()
                subprocess.run(["curl", "-sS", "--no-progress-meter", "--fail", *parallel, "--config", config], check=True, stdout=subprocess.DEVNULL)
                t = time.perf_counter() - t0
                print(f"curl {'8 at a time' if parallel else 'one by one'}: {t:.2f} s; Apache CPU {cpu_of(apache()) - a0:.2f} s, "
                      f"machine busy {busy() - b0:.2f} of {2 * t:.2f} s")
    finally:
        cleanup_all()
        srv.stop()
        proc.empty_trash()


if __name__ == "__main__":
    main()
