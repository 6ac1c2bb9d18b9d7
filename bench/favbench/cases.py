"""The benchmark cases. Each case measures one number per tool per run.

Tools: `curl` (the transport's limit over the same HTTP server; over SMB `smbclient` takes
its place), `favfs`, `rclone` (the closest peer: rclone mount --vfs-cache-mode full) and
`disk` (the served folder read directly: the limit of any cache on this disk). A tool that
has no meaningful way to do a case is simply not listed for it; where the transport's tool of
one server cannot express a case its peer can, the case names it in `skip`, with why.

"Cold" means page caches dropped and, for the mounts, a fresh cache folder and a fresh mount.
"""
import contextlib
import fnmatch
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field

from . import proc
from .data import human
from .mounts import FavfsMount, RcloneMount

PROBE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probe.py")
MB = 1e6  # throughput is reported in MB/s = 10^6 bytes/s, as fio and dd do


@dataclass
class Case:
    name: str
    unit: str
    higher_is_better: bool
    tools: list
    measure: object             # measure(ctx, tool) -> float
    note: str = ""
    skip: dict = field(default_factory=dict)  # tool -> why it cannot do this case


class Context:
    """What the cases share: the binary, server, data set and the mounts' bookkeeping."""

    def __init__(self, workdir, dataset, server, favfs_bin, favfs_remote, timeout, log):
        self.workdir = workdir
        self.ds = dataset
        self.server = server
        self.favfs_bin = favfs_bin
        self.favfs_remote = favfs_remote
        self.timeout = timeout
        self.log = log
        self.rss = {}           # tool -> peak RSS KiB seen during the current measurement
        self.cpu = {}           # tool -> daemon CPU seconds used in the current measurement
        self.favfs_args = []    # extra `favfs mount` options (--favfs-args)
        self.base_bin = None    # the binary of tool favfs-base (--base-bin)
        self._serial = 0

    # -- mounts ------------------------------------------------------------------------
    def _fresh_cache(self, tool):
        self._serial += 1
        d = os.path.join(self.workdir, "cache", f"{tool}-{self._serial}")
        proc.discard(d)
        return d

    @staticmethod
    def is_favfs(tool):
        """favfs, or favfs-base: the same program, another build (--base-bin)."""
        return tool in ("favfs", "favfs-base")

    def _binary(self, tool):
        return self.base_bin if tool == "favfs-base" else self.favfs_bin

    def make_mount(self, tool, cache_dir, server=None):
        mnt = os.path.join(self.workdir, "mnt", tool)
        if server is not None:
            # Another server of the run (the FTP cases' vsftpd): its own remote and login.
            if self.is_favfs(tool):
                login, secret = server.favfs_login()
                return FavfsMount(self._binary(tool), server.favfs_remote, mnt, cache_dir,
                                  extra=self.favfs_args + login, stdin=secret)
            return RcloneMount(server.rclone_remote(), mnt, cache_dir)
        if self.is_favfs(tool):
            # The server's own remote may need a password (SMB); file:// of the data does not.
            login, secret = self.server.favfs_login() if self.favfs_remote == self.server.favfs_remote else ([], None)
            return FavfsMount(self._binary(tool), self.favfs_remote, mnt, cache_dir,
                              extra=self.favfs_args + login, stdin=secret)
        return RcloneMount(self.server.rclone_remote(), mnt, cache_dir)

    @contextlib.contextmanager
    def mounted(self, tool, cache_dir=None, keep_cache=False, server=None):
        """A fresh mount (fresh cache folder unless given); unmounted and its cache removed
        afterwards, with the daemon's peak RSS recorded just before the unmount.
        keep_cache: `favfs unmount --keep-cache` (rclone always keeps its cache folder).
        server: mount that server instead of the run's (see make_mount)."""
        own = cache_dir is None
        cache_dir = cache_dir or self._fresh_cache(tool)
        m = self.make_mount(tool, cache_dir, server).mount()
        cpu0 = m.cpu_seconds()
        try:
            yield m
            rss = m.peak_rss_kib()
            if rss:
                self.rss[tool] = max(self.rss.get(tool, 0), rss)
            cpu1 = m.cpu_seconds()
            if cpu0 is not None and cpu1 is not None:
                self.cpu[tool] = self.cpu.get(tool, 0) + cpu1 - cpu0
        finally:
            # A cache of our own is discarded whole (see proc.discard): favfs need not evict it.
            m.unmount(keep_cache=True) if (keep_cache or own) and self.is_favfs(tool) else m.unmount()
            self._keep_log(tool, cache_dir)
            if own:
                proc.discard(cache_dir)

    def _keep_log(self, tool, cache_dir):
        """Copies favfs's mount log out of its cache folder, which is discarded: WORKDIR/logs/
        keeps one per cache folder (a remount on the same folder appends to it)."""
        log = os.path.join(cache_dir, "favfs.log")
        if self.is_favfs(tool) and os.path.exists(log):
            os.makedirs(os.path.join(self.workdir, "logs"), exist_ok=True)
            shutil.copyfile(log, os.path.join(self.workdir, "logs", os.path.basename(cache_dir) + ".log"))

    # -- primitives --------------------------------------------------------------------
    def probe(self, *args):
        """Runs probe.py; returns (bytes, seconds) as measured inside the child."""
        cp = proc.run([sys.executable, PROBE, *args], timeout=self.timeout)
        r = json.loads(cp.stdout)
        return r["bytes"], r["seconds"]

    def read_rate(self, paths):
        n, s = self.probe("read", *paths)
        return n / s / MB

    def timed_quiet(self, cmd):
        """Seconds of wall time of `cmd`, its output discarded."""
        seconds, _ = proc.timed(cmd, timeout=self.timeout, capture=False)
        return seconds

    def drop(self):
        proc.drop_caches()

    def drop_file(self, rel):
        """Evicts one served file's pages only (the server's disk is cold for it); every
        program's code, favfs's included, stays in memory."""
        fd = os.open(self.disk(rel), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    def disk(self, rel):
        return os.path.join(self.ds.files, rel)

    def url(self, rel):
        return self.server.url + rel

    @contextlib.contextmanager
    def download_target(self, tool):
        """Where curl writes: /dev/null for `curl` (the transport's limit), a file beside the
        mounts' cache folders for `curl-file` (downloading to the same disk, as a cache must)."""
        if tool == "curl":
            yield "/dev/null"
            return
        self._serial += 1
        path = os.path.join(self.workdir, "cache", f"curl-download-{self._serial}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            yield path
        finally:
            if os.path.exists(path):
                os.unlink(path)

    def curl(self, *args):
        return proc.run(["curl", "-sS", "--fail", *args], timeout=self.timeout).stdout

    def smbclient(self):
        """A connected smbclient session (SMB server only): see smb.SmbclientSession."""
        return self.server.session(self.timeout)

    def smbclient_read_rate(self, rels):
        """MB/s of `get`s to /dev/null (smbclient's `curl -o /dev/null`), one connected
        session per file, all sent at once after the page cache is dropped."""
        with contextlib.ExitStack() as stack:
            sessions = [stack.enter_context(self.smbclient()) for _ in rels]
            self.drop()
            t0 = time.perf_counter()
            for session, rel in zip(sessions, rels):
                session.send([f"get {rel} /dev/null"])
            for session in sessions:
                session.wait()
            took = time.perf_counter() - t0
        return sum(os.path.getsize(self.disk(r)) for r in rels) / took / MB


# -- sequential reads -------------------------------------------------------------------
def seq_read(size, mode):
    def measure(ctx, tool):
        rel = ctx.ds.read_file(size)
        if tool in ("curl", "curl-file"):
            ctx.drop()
            with ctx.download_target(tool) as target:
                out = ctx.curl("-o", target, "-w", "%{size_download} %{time_total}", ctx.url(rel))
            n, s = out.split()
            return int(n) / float(s) / MB
        if tool == "smbclient":
            return ctx.smbclient_read_rate([rel])
        if tool == "disk":
            path = ctx.disk(rel)
            return _read_in_mode(ctx, path, mode)
        with ctx.mounted(tool) as m:
            return _read_in_mode(ctx, m.path(rel), mode)

    tools = {"cold": ["curl", "curl-file", "smbclient", "favfs", "rclone", "disk"],
             "warm": ["favfs", "rclone", "disk"],
             "hot": ["favfs", "rclone", "disk"]}[mode]
    notes = {"cold": "fresh mount and cache, page cache dropped; smbclient: get to /dev/null on a connected session",
             "warm": "read once, page cache dropped, read again (mount stays up); disk = cold disk read",
             "hot": "read once, read again with the page cache intact"}
    return Case(f"seq_{mode}_{human(size)}", "MB/s", True, tools, measure, notes[mode])


def _read_in_mode(ctx, path, mode):
    if mode == "cold":
        ctx.drop()
        return ctx.read_rate([path])
    ctx.read_rate([path])            # prime: content into the tool's cache (and page cache)
    if mode == "warm":
        ctx.drop()
    return ctx.read_rate([path])


def seq_warm_remount(size):
    def measure(ctx, tool):
        rel = ctx.ds.read_file(size)
        cache = ctx._fresh_cache(tool)
        try:
            with ctx.mounted(tool, cache, keep_cache=True) as m:
                ctx.read_rate([m.path(rel)])
            with ctx.mounted(tool, cache) as m:
                ctx.drop()
                return ctx.read_rate([m.path(rel)])
        finally:
            proc.discard(cache)
    return Case(f"seq_warm_remount_{human(size)}", "MB/s", True, ["favfs", "rclone"], measure,
                "read once, unmount (favfs --keep-cache), remount on the same cache folder, page cache dropped, read again")


# -- time to first byte -----------------------------------------------------------------
NO_RANGE = {"smbclient": "smbclient has no ranged read (get fetches the whole file)"}

def ttfb(size):
    def measure(ctx, tool):
        rel = ctx.ds.read_file(size)
        if tool == "curl":
            ctx.drop()
            return float(ctx.curl("-o", "/dev/null", "-r", "0-0", "-w", "%{time_starttransfer}", ctx.url(rel))) * 1000
        if tool == "disk":
            ctx.drop()
            return ctx.probe("ttfb", ctx.disk(rel))[1] * 1000
        with ctx.mounted(tool) as m:
            # The folder was browsed (metadata known), the file's content never read.
            proc.run(["ls", "-l", m.mnt], timeout=ctx.timeout)
            ctx.drop()
            return ctx.probe("ttfb", m.path(rel))[1] * 1000
    return Case(f"ttfb_{human(size)}", "ms", False, ["curl", "favfs", "rclone", "disk"], measure,
                "open + read 1 byte of a never-read file, its folder already listed; curl: Range 0-0",
                skip=NO_RANGE)


def ttfb_file_cold(size):
    def measure(ctx, tool):
        rel = ctx.ds.read_file(size)
        if tool == "curl":
            ctx.drop_file(rel)
            return float(ctx.curl("-o", "/dev/null", "-r", "0-0", "-w", "%{time_starttransfer}", ctx.url(rel))) * 1000
        if tool == "disk":
            ctx.drop_file(rel)
            return ctx.probe("ttfb", ctx.disk(rel))[1] * 1000
        with ctx.mounted(tool) as m:
            proc.run(["ls", "-l", m.mnt], timeout=ctx.timeout)
            ctx.drop_file(rel)
            return ctx.probe("ttfb", m.path(rel))[1] * 1000
    return Case(f"ttfb_filecold_{human(size)}", "ms", False, ["curl", "favfs", "rclone", "disk"], measure,
                "as ttfb, but only the file's pages are dropped (fadvise): programs' code stays in memory",
                skip=NO_RANGE)


# -- random reads -----------------------------------------------------------------------
def randread(size, runtime):
    def measure(ctx, tool):
        rel = ctx.ds.read_file(size)
        if tool == "disk":
            ctx.drop()
            return _fio(ctx, ctx.disk(rel), size, runtime)
        with ctx.mounted(tool) as m:
            ctx.drop()
            return _fio(ctx, m.path(rel), size, runtime)
    return Case(f"randread_4k_{human(size)}", "IOPS", True, ["favfs", "rclone", "disk"], measure,
                f"fio psync 4 KiB random reads, {runtime}s, cold file")


def _fio(ctx, path, size, runtime):
    cp = proc.run(["fio", "--name=r", f"--filename={path}", "--rw=randread", "--bs=4k",
                   f"--size={size}", f"--runtime={runtime}", "--time_based", "--ioengine=psync",
                   "--direct=0", "--readonly", "--output-format=json"],
                  timeout=min(ctx.timeout, runtime + 300))
    return float(json.loads(cp.stdout)["jobs"][0]["read"]["iops"])


# -- listings ---------------------------------------------------------------------------
# The PROPFIND favfs sends (WebDAVProvider.itemProperties). curl without a body asks for
# allprop, which costs Apache about three times as much (lock discovery, content types): a
# baseline favfs never pays, so the comparison would flatter favfs.
PROPFIND_BODY = ('<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:" xmlns:F="urn:x-favfs:"><D:prop>'
                 '<D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/><F:mtime/></D:prop></D:propfind>\n')
PROPFIND = ["-X", "PROPFIND", "-H", "Depth: 1", "-H", "Content-Type: application/xml; charset=utf-8",
            "--data-binary", PROPFIND_BODY]


def ls_cold(rel):
    def measure(ctx, tool):
        if tool == "curl":
            ctx.drop()
            return float(ctx.curl("-o", "/dev/null", *PROPFIND, "-w", "%{time_total}", ctx.url(rel) + "/"))
        if tool == "smbclient":
            with ctx.smbclient() as session:
                ctx.drop()
                return session.run([f"ls {rel}/*"])
        if tool == "disk":
            ctx.drop()
            return ctx.timed_quiet(["ls", "-l", ctx.disk(rel)])
        with ctx.mounted(tool) as m:
            ctx.drop()
            return ctx.timed_quiet(["ls", "-l", m.path(rel)])
    return Case(f"ls_cold_{rel}", "s", False, ["curl", "smbclient", "favfs", "rclone", "disk"], measure,
                "ls -l on a fresh mount and cache; curl: one PROPFIND Depth: 1 of the properties favfs asks for; "
                "smbclient: `ls DIR/*` on a connected session")


def ls_remount(rel):
    def measure(ctx, tool):
        cache = ctx._fresh_cache(tool)
        try:
            with ctx.mounted(tool, cache) as m:
                proc.run(["ls", "-l", m.path(rel)], timeout=ctx.timeout)
            # favfs unmount evicts content but keeps placeholders; rclone keeps its cache dir.
            with ctx.mounted(tool, cache) as m:
                ctx.drop()
                return ctx.timed_quiet(["ls", "-l", m.path(rel)])
        finally:
            proc.discard(cache)
    return Case(f"ls_remount_{rel}", "s", False, ["favfs", "rclone"], measure,
                "ls -l after unmount and remount with the same cache folder")


def find_tree(rel, folders):
    def measure(ctx, tool):
        if tool == "curl":
            # The transport's limit: one PROPFIND Depth: 1 per folder on one connection.
            urls = [ctx.url(rel) + "/"] + [ctx.url(f"{rel}/d{d:03d}/") for d in range(folders)]
            ctx.drop()
            return ctx.timed_quiet(["curl", "-sS", "--fail", *PROPFIND, *urls])
        if tool == "smbclient":
            with ctx.smbclient() as session:
                ctx.drop()
                return session.run([f"ls {rel}/*"] + [f"ls {rel}/d{d:03d}/*" for d in range(folders)])
        if tool == "disk":
            ctx.drop()
            return ctx.timed_quiet(["find", ctx.disk(rel)])
        with ctx.mounted(tool) as m:
            ctx.drop()
            return ctx.timed_quiet(["find", m.path(rel)])
    return Case(f"find_{rel}", "s", False, ["curl", "smbclient", "favfs", "rclone", "disk"], measure,
                "find over the tree, fresh mount and cache; curl: PROPFIND Depth: 1 per folder, favfs's properties; "
                "smbclient: `ls` per folder on one connected session")


# -- parallel reads ---------------------------------------------------------------------
def parallel(rels, each):
    def measure(ctx, tool):
        if tool in ("curl", "curl-file"):
            with contextlib.ExitStack() as stack:
                args = []
                for r in rels:
                    args += [ctx.url(r), "-o", stack.enter_context(ctx.download_target(tool))]
                ctx.drop()
                t0 = time.perf_counter()
                ctx.curl("--parallel", "--parallel-max", str(len(rels)), *args)
                return len(rels) * each / (time.perf_counter() - t0) / MB
        if tool == "smbclient":
            return ctx.smbclient_read_rate(rels)
        if tool == "disk":
            ctx.drop()
            return ctx.read_rate([ctx.disk(r) for r in rels])
        with ctx.mounted(tool) as m:
            ctx.drop()
            return ctx.read_rate([m.path(r) for r in rels])
    return Case(f"parallel_{len(rels)}x{human(each)}", "MB/s", True,
                ["curl", "curl-file", "smbclient", "favfs", "rclone", "disk"],
                measure, "aggregate throughput of parallel cold readers; smbclient: one connected session per file")


def all_cases(ds):
    """Every case for the data set's scale, in run order (big reads first, so the favfs
    peak RSS reported is the one after them)."""
    s = ds.scale
    big = max(s.read_sizes)
    cases = []
    for size in s.read_sizes:
        cases.append(seq_read(size, "cold"))
        cases.append(seq_read(size, "warm"))
        cases.append(seq_read(size, "hot"))
        cases.append(seq_warm_remount(size))
    n, each = s.parallel
    cases.append(parallel(ds.parallel_files(), each))
    cases.append(ttfb(big))
    cases.append(ttfb_file_cold(big))
    cases.append(randread(big, s.fio_runtime))
    for rel in [ds.small_dir()] + [ds.list_dir(c) for c in s.list_counts]:
        cases.append(ls_cold(rel))
        cases.append(ls_remount(rel))
    for folders, items in s.trees:
        cases.append(find_tree(ds.tree_dir(items), folders))
    from .writes import write_cases  # writes builds on this module's Case
    cases += write_cases(ds)
    from .programs import program_cases
    cases += program_cases(ds)
    from .ftpcases import ftp_cases
    cases += ftp_cases()
    return cases


def select(cases, patterns):
    """Cases whose name matches one of the comma-separated glob patterns (all if none)."""
    if not patterns:
        return cases
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [c for c in cases if any(fnmatch.fnmatch(c.name, p) or c.name.startswith(p) for p in pats)]
    if not chosen:
        raise SystemExit(f"no case matches {patterns}; cases: {', '.join(c.name for c in cases)}")
    return chosen
