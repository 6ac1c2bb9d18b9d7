"""Subprocesses with hard timeouts, page-cache control, and the mount table.

Every command the harness runs goes through `run()`: it gets its own process group and a
timeout, so a hung FUSE mount costs at most that timeout, never the whole benchmark.
Nothing here touches a mounted path in-process (a hung mount would hang Python itself):
mount state is read from /proc/self/mountinfo.
"""
import os
import shutil
import signal
import subprocess
import time

DEFAULT_TIMEOUT = 600  # seconds; the per-case bound the brief asks for


class ToolError(RuntimeError):
    """A tool failed (mount did not come up, a reader failed, a server did not start).

    The harness exits non-zero on these; slow timings are never errors.
    """


def run(cmd, timeout=DEFAULT_TIMEOUT, check=True, env=None, stdin=None, capture=True):
    """Runs `cmd` (a list) with a timeout; returns CompletedProcess with text output.

    On timeout the whole process group is killed (SIGKILL also ends processes waiting on a
    FUSE request) and ToolError is raised.
    """
    try:
        p = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.PIPE if capture else subprocess.DEVNULL,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        # A program not installed (fio, sqlite3 …) fails its case, not the whole run.
        raise ToolError(f"not installed: {cmd[0]}")
    try:
        out, err = p.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(p)
        raise ToolError(f"timed out after {timeout}s: {' '.join(map(str, cmd))}")
    except BaseException:
        _kill_group(p)  # Ctrl-C: leave no child behind
        raise
    cp = subprocess.CompletedProcess(cmd, p.returncode, out or "", err or "")
    if check and p.returncode != 0:
        raise ToolError(f"exit {p.returncode}: {' '.join(map(str, cmd))}\n{_clip((err or '').strip())}")
    return cp


def _clip(text, keep=1000):
    """Head and tail of a long error output: the cause is often first, a backtrace last."""
    return text if len(text) <= 2 * keep else text[:keep] + "\n…\n" + text[-keep:]


def timed(cmd, timeout=DEFAULT_TIMEOUT, **kw):
    """Runs `cmd` and returns (seconds of wall time, CompletedProcess)."""
    t0 = time.perf_counter()
    cp = run(cmd, timeout=timeout, **kw)
    return time.perf_counter() - t0, cp


def _kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def drop_caches():
    """Writes dirty pages and drops page cache, dentries and inodes (root only).

    This also drops the FUSE mounts' page cache and the served folder's, so a "cold" read
    pays the server's disk read too, for every tool alike.
    """
    run(["sync"], timeout=120)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def mountpoints():
    """The set of mount points in this namespace, read without touching any of them."""
    result = set()
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4]
            # mountinfo escapes space, tab, newline and backslash as octal
            result.add(mp.encode().decode("unicode_escape"))
    return result


def is_mounted(path):
    return os.path.realpath(path) in mountpoints()


def wait_until(predicate, timeout, interval=0.05):
    """Polls `predicate` until true or `timeout` seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def pids_matching(pattern):
    """PIDs whose command line matches `pattern` (pgrep -f), excluding this process."""
    cp = run(["pgrep", "-f", pattern], timeout=10, check=False)
    return [int(x) for x in cp.stdout.split() if int(x) != os.getpid()]


def cpu_seconds(pid):
    """User + system CPU time `pid` has used (its threads included), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


def vm_hwm_kib(pid):
    """Peak resident set size (VmHWM) of `pid` in KiB, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


# -- deferred deletion --------------------------------------------------------------------
# Deleting thousands of files right before a measurement slows every file created after it on
# an ext4 without a journal (this VM's root): the inode allocator skips inodes freed in the
# last 60-300 s, reading each from the inode table (`recently_deleted` in perf, a quarter of
# the CPU of creating 2,000 files). So trees of many files are moved aside and deleted when
# the run ends; big files are deleted at once (one inode each, and the disk space matters).
TRASH = None  # set by bench.py: WORKDIR/trash
_trash_serial = 0


def discard(path):
    """Removes `path` (a folder): big files now, the rest when the run ends."""
    global _trash_serial
    if not os.path.lexists(path):
        return
    if TRASH is None:
        shutil.rmtree(path, ignore_errors=True)
        return
    for root, _, files in os.walk(path):
        for name in files:
            p = os.path.join(root, name)
            try:
                if os.lstat(p).st_size > (1 << 20):
                    os.unlink(p)
            except OSError:
                pass
    os.makedirs(TRASH, exist_ok=True)
    _trash_serial += 1
    try:
        os.rename(path, os.path.join(TRASH, f"{os.getpid()}-{_trash_serial}"))
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def empty_trash():
    if TRASH:
        shutil.rmtree(TRASH, ignore_errors=True)
