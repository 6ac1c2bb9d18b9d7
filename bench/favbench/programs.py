"""Program cases: what a person waits for when a real program works in the mount.

Each is timed as the program's own run (it exits when its data is as safe as it asked for:
sqlite and vim fsync what they write), not until the server has it; the upload follows in the
background. `disk` runs the same program on the served folder itself. Compare favfs's two fsync
promises with `--favfs-args=--fsync=remote` in a second run.
"""
import os
import pwd
import random
import time

from . import proc
from .cases import Case
from .writes import UPLOADS, _uploads_dir

SQL_ROWS, SQL_TRANSACTIONS = 10_000, 100
EDIT_SIZE = 100_000
RSYNC_FILES = 300


def _sqlite_script():
    per = SQL_ROWS // SQL_TRANSACTIONS
    lines = ["CREATE TABLE t(a INTEGER, b TEXT);"]
    for tx in range(SQL_TRANSACTIONS):
        lines.append("BEGIN;")
        lines += [f"INSERT INTO t VALUES({tx * per + i}, 'row {tx * per + i} of the benchmark');" for i in range(per)]
        lines.append("COMMIT;")
    return "\n".join(lines) + "\n"


def _in_folder(ctx, tool, run, prepare=None):
    """`run(folder)`'s seconds, in the uploads folder of a fresh mount of `tool` (or on disk);
    `prepare(served folder)` first, before anything is mounted."""
    dest_dir = _uploads_dir(ctx)
    try:
        if prepare:
            prepare(dest_dir)
        if tool == "disk":
            return run(dest_dir)
        with ctx.mounted(tool) as m:
            folder = m.path(UPLOADS)
            os.listdir(folder)
            return run(folder)
    finally:
        proc.discard(dest_dir)


def sqlite_transactions():
    """sqlite3 inserting 10,000 rows in 100 transactions (its default rollback journal and
    synchronous=FULL: every commit fsyncs the database and its journal)."""
    script = _sqlite_script()

    def measure(ctx, tool):
        def run(folder):
            db = os.path.join(folder, "bench.db")
            t0 = time.perf_counter()
            proc.run(["sqlite3", db], stdin=script, timeout=ctx.timeout)
            took = time.perf_counter() - t0
            rows = proc.run(["sqlite3", db, "SELECT count(*) FROM t;"], timeout=ctx.timeout).stdout.strip()
            if rows != str(SQL_ROWS):
                raise proc.ToolError(f"sqlite3 in the {tool} folder: {rows!r} rows, not {SQL_ROWS}")
            return took
        return _in_folder(ctx, tool, run)
    return Case("sqlite_100tx", "s", False, ["favfs", "rclone", "disk"], measure,
                "sqlite3: 10,000 rows in 100 transactions into a new database (each commit fsyncs); the program's own time")


def editor_save():
    """vim opening an existing 100 KB file, adding a line and saving (`:wq`, which fsyncs)."""
    def prepare(served_folder):
        served = os.path.join(served_folder, "notes.txt")
        with open(served, "w") as f:
            f.write("".join(f"line {i} of some notes to edit\n" for i in range(EDIT_SIZE // 30)))
        www = pwd.getpwnam("www-data")
        os.chown(served, www.pw_uid, www.pw_gid)

    def measure(ctx, tool):
        def run(folder):
            path = os.path.join(folder, "notes.txt")
            with open(path) as f:  # listed and read once, as a person opening it would have
                f.read()
            t0 = time.perf_counter()
            proc.run(["vim", "-es", "-u", "NONE", "-n", "-c", "normal Goone more line", "-c", "wq", path], timeout=ctx.timeout)
            took = time.perf_counter() - t0
            with open(path) as f:
                if not f.read().endswith("one more line\n"):
                    raise proc.ToolError(f"vim's save is not in the {tool} folder")
            return took
        return _in_folder(ctx, tool, run, prepare)
    return Case("editor_save", "s", False, ["favfs", "rclone", "disk"], measure,
                "vim -es: open a 100 KB file, add a line, :wq (writes and fsyncs); the program's own time")


def _rsync_source(root):
    """A source tree of RSYNC_FILES small files (100 B to 60 KB) in nested folders, with past
    times, made once per run."""
    if os.path.isdir(root):
        return root
    rng = random.Random(7)
    for i in range(RSYNC_FILES):
        folder = os.path.join(root, f"d{i % 6}", f"e{i % 4}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"f{i}.bin")
        with open(path, "wb") as f:
            f.write(rng.randbytes(rng.randint(100, 60_000)))
        t = 1_600_000_000 + i * 3600 + 0.123456789
        os.utime(path, (t, t))
    return root


def _rsync(source, dest, timeout):
    """Seconds of `rsync -ai` and the files it sent (its `>f` lines)."""
    t0 = time.perf_counter()
    out = proc.run(["rsync", "-ai", source + "/", dest + "/"], timeout=timeout).stdout
    return time.perf_counter() - t0, [line for line in out.splitlines() if line.startswith(">f")]


def rsync_again():
    """`rsync -a` of a 300-file tree into the mount, unmount, mount again, the same `rsync -a`:
    the second run's time (it should find every time it set and send nothing)."""
    def measure(ctx, tool):
        source = _rsync_source(os.path.join(ctx.workdir, "rsync-source"))
        dest_dir = _uploads_dir(ctx)
        try:
            if tool == "disk":
                _rsync(source, dest_dir, ctx.timeout)
                took, sent = _rsync(source, dest_dir, ctx.timeout)
            else:
                cache = ctx._fresh_cache(tool)
                try:
                    with ctx.mounted(tool, cache_dir=cache, keep_cache=True) as m:
                        _rsync(source, m.path(UPLOADS), ctx.timeout)
                    with ctx.mounted(tool, cache_dir=cache, keep_cache=True) as m:
                        took, sent = _rsync(source, m.path(UPLOADS), ctx.timeout)
                finally:
                    proc.discard(cache)
            if sent:
                print(f"  rsync_again: {tool} sent {len(sent)} of {RSYNC_FILES} files again after the remount: {sent[:3]}")
            return took
        finally:
            proc.discard(dest_dir)
    return Case("rsync_again", "s", False, ["favfs", "rclone", "disk"], measure,
                f"rsync -a of {RSYNC_FILES} files, remount, the same rsync -a again: the second run's time")


def _git_source(root):
    """A repository of the rsync tree (300 files in 24 folders), one commit, made once per run."""
    if os.path.isdir(os.path.join(root, ".git")):
        return root
    _rsync_source(root)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "tree"]):
        proc.run(["git", "-C", root] + args, timeout=120)
    return root


def git_clone():
    """`git clone` of a local 300-file repository into the mount: objects written as packs,
    then 300 files checked out in 24 folders."""
    def measure(ctx, tool):
        source = _git_source(os.path.join(ctx.workdir, "git-source"))

        def run(folder):
            dest = os.path.join(folder, "clone")
            t0 = time.perf_counter()
            proc.run(["git", "clone", "-q", "--no-hardlinks", source, dest], timeout=ctx.timeout)
            took = time.perf_counter() - t0
            status = proc.run(["git", "-C", dest, "status", "--porcelain"], timeout=ctx.timeout).stdout
            if status.strip():
                raise proc.ToolError(f"git clone in the {tool} folder: the checkout differs: {status[:200]}")
            return took
        return _in_folder(ctx, tool, run)
    return Case("git_clone", "s", False, ["favfs", "rclone", "disk"], measure,
                f"git clone of a local {RSYNC_FILES}-file repository (one commit) into the folder; the program's own time")


def program_cases(ds):
    return [sqlite_transactions(), editor_save(), rsync_again(), git_clone()]
