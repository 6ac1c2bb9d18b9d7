"""FTP read cases: a folder of files read back with `cat` through a mount of a loopback
vsftpd, beside curl fetching the same files from it.

Tools: `curl` (one curl fetching the files one after another over one connection: the
transport's limit, but curl 7.88 stalls up to 1 s on some files, the EPSV timer bug
CurlLoop works around, so its runs vary tenfold), `curl-file` (the same, each file saved on
the disk the caches are on, as a cache must land them), `ftplib` (Python's ftplib doing the same,
one connection, files one after another, without that stall), `curl-each` (one curl per
file, one after another: a login per file, as a script of `curl` calls does), `favfs` and `rclone` (`:ftp:` remote, --vfs-cache-mode full),
each a fresh mount and cache with the folder listed before the clock starts. The served files
are read into the page cache (and dirty pages written out) before each measurement: the
comparison is the protocol and the client, not this VM's disk, whose throttled reads, behind
the writeback of the mounts' caches, made curl's cold runs vary tenfold. The server is the
bench's own (ftp.VsftpdServer), whatever --server is.
"""
import atexit
import os
import sys
import time

from . import proc
from .cases import MB, Case
from .ftp import SETS, VsftpdServer

_server = None


def ftp_server(ctx):
    """The vsftpd of this run, started at first use and stopped when the harness exits."""
    global _server
    if _server is None:
        s = VsftpdServer(os.path.join(ctx.workdir, "ftp"))
        s.ensure_data(log=ctx.log)
        s.start()
        atexit.register(s.stop)
        ctx.log(f"{s.description}: {s.favfs_remote}")
        _server = s
    return _server


# Python's ftplib in a child process (timed inside it): login, then RETR of each file on the
# one connection, bytes discarded. Prints the seconds the RETRs took.
FTPLIB = """
import ftplib, sys, time
port, user, password, *paths = sys.argv[1:]
ftp = ftplib.FTP()
ftp.connect("127.0.0.1", int(port))
ftp.login(user, password)
t0 = time.perf_counter()
for p in paths:
    ftp.retrbinary("RETR " + p, lambda b: None, blocksize=1 << 20)
print(time.perf_counter() - t0)
ftp.quit()
"""


def _served_in_memory(ctx, s, rels):
    proc.run(["sync"], timeout=ctx.timeout)
    ctx.timed_quiet(["cat"] + [os.path.join(s.files, r) for r in rels])


def ftp_read(name):
    def measure(ctx, tool):
        s = ftp_server(ctx)
        rels = s.set_files(name)
        total = s.set_bytes(name)
        if tool not in ("curl", "ftplib", "curl-each"):
            with ctx.mounted(tool, server=s) as m:
                proc.run(["ls", "-l", m.path(name)], timeout=ctx.timeout)
                _served_in_memory(ctx, s, rels)
                return total / ctx.timed_quiet(["cat"] + [m.path(r) for r in rels]) / MB
        _served_in_memory(ctx, s, rels)
        if tool == "ftplib":
            from .ftp import PASSWORD, USER
            cp = proc.run([sys.executable, "-c", FTPLIB, str(s.port), USER, PASSWORD] + ["/files/" + r for r in rels],
                          timeout=ctx.timeout)
            return total / float(cp.stdout.strip()) / MB
        if tool in ("curl", "curl-file"):
            # curl-file: each file saved on the disk the caches are on, one file per file, as
            # a cache must land them (fresh folder, discarded after).
            saved = os.path.join(ctx.workdir, "cache", f"curl-ftp-{name}") if tool == "curl-file" else None
            if saved:
                proc.discard(saved)
                os.makedirs(saved)
            args = []
            for r in rels:
                args += [s.url(r), "-o", os.path.join(saved, os.path.basename(r)) if saved else "/dev/null"]
            try:
                t0 = time.perf_counter()
                ctx.curl(*args)
                return total / (time.perf_counter() - t0) / MB
            finally:
                if saved:
                    proc.discard(saved)
        t0 = time.perf_counter()
        for r in rels:
            ctx.curl("-o", "/dev/null", s.url(r))
        return total / (time.perf_counter() - t0) / MB
    count, _ = SETS[name]
    return Case(f"ftp_read_{name}", "MB/s", True, ["curl", "curl-file", "ftplib", "curl-each", "favfs", "rclone"], measure,
                f"cat of {count} files ({name}) from a loopback vsftpd, served files in memory, folder listed, fresh mount and cache; "
                "curl, ftplib: one process, one file after another on one connection (curl-file: each saved to the caches' disk); "
                "curl-each: one process per file")


def ftp_cases():
    return [ftp_read("ones"), ftp_read("mixed")]
