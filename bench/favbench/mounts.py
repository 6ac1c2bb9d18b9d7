"""favfs and rclone mounts, each unmounted on every exit path.

Every live mount is kept in `LIVE`; `cleanup_all()` (called from finally, atexit and the
signal handlers) unmounts whatever is left, falling back to a lazy `fusermount3 -u -z`.
"""
import os
import time

from . import proc

LIVE = []  # mounts that may still be up, newest last


class Mount:
    """Common bits: mount point, cache folder, the daemon's pid and peak RSS."""

    kind = "?"
    pattern = None  # pgrep -f pattern that finds this mount's daemon

    def __init__(self, mnt, cache_dir):
        self.mnt = os.path.abspath(mnt)
        self.cache_dir = os.path.abspath(cache_dir)
        self.pid = None
        os.makedirs(self.mnt, exist_ok=True)
        os.makedirs(self.cache_dir, exist_ok=True)

    def path(self, rel):
        return os.path.join(self.mnt, rel)

    def _after_mount(self, timeout=60):
        if not proc.wait_until(lambda: proc.is_mounted(self.mnt), timeout):
            raise proc.ToolError(f"{self.kind}: {self.mnt} is not mounted")
        pids = proc.wait_until(lambda: proc.pids_matching(self.pattern), 10)
        # The daemon is the newest match; `favfs mount` exits once the child answers.
        self.pid = max(pids) if pids else None
        LIVE.append(self)

    def peak_rss_kib(self):
        """VmHWM of the daemon: its peak resident memory since it started."""
        return proc.vm_hwm_kib(self.pid) if self.pid else None

    def cpu_seconds(self):
        """CPU time the daemon has used since it started."""
        return proc.cpu_seconds(self.pid) if self.pid else None

    def _wait_daemon_gone(self, timeout=30):
        if self.pid:
            proc.wait_until(lambda: not os.path.exists(f"/proc/{self.pid}"), timeout)

    def _force_unmount(self):
        if proc.is_mounted(self.mnt):
            proc.run(["fusermount3", "-u", "-z", self.mnt], timeout=30, check=False)
        self._wait_daemon_gone(10)
        if self.pid and os.path.exists(f"/proc/{self.pid}"):
            # Our own daemon, by its pid: it would otherwise outlive the harness.
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass

    def _forget(self):
        if self in LIVE:
            LIVE.remove(self)


class FavfsMount(Mount):
    kind = "favfs"

    def __init__(self, binary, remote, mnt, cache_dir, cache_size="20G", extra=(), stdin=None):
        super().__init__(mnt, cache_dir)
        self.extra = list(extra)
        self.stdin = stdin  # the password, for --password-stdin (SMB)
        self.binary = binary
        self.remote = remote
        self.cache_size = cache_size
        self.pattern = f"favfs[^ ]* mount .*{self.mnt}"  # any build: favfs, favfs-before …

    def mount(self, timeout=120):
        proc.run([self.binary, "mount", self.mnt, "--remote", self.remote,
                  "--cache-dir", self.cache_dir, "--cache-size", self.cache_size, *self.extra],
                 stdin=self.stdin, timeout=timeout)
        self._after_mount()
        return self

    def unmount(self, keep_cache=False, timeout=300):
        """`favfs unmount` (evicts content unless keep_cache); forced if that fails."""
        if not proc.is_mounted(self.mnt):
            self._forget()
            return
        cmd = [self.binary, "unmount", self.mnt] + (["--keep-cache"] if keep_cache else [])
        try:
            proc.run(cmd, timeout=timeout)
            self._wait_daemon_gone()
        except proc.ToolError:
            self._force_unmount()
            raise
        finally:
            self._forget()


class RcloneMount(Mount):
    kind = "rclone"

    def __init__(self, remote, mnt, cache_dir):
        super().__init__(mnt, cache_dir)
        self.remote = remote  # [":webdav:", "--webdav-url", URL] or [":smb:files", "--smb-host", …]
        self.pattern = f"rclone mount .*{self.mnt}"

    def mount(self, timeout=120):
        # An on-the-fly remote; an empty config so no user config leaks in.
        conf = os.path.join(self.cache_dir, "rclone.conf")
        open(conf, "a").close()
        proc.run(["rclone", "mount", self.remote[0], self.mnt, *self.remote[1:],
                  "--vfs-cache-mode", "full", "--cache-dir", self.cache_dir, "--config", conf,
                  "--daemon", "--daemon-wait", "60s"], timeout=timeout)
        self._after_mount()
        return self

    def unmount(self, timeout=60):
        try:
            if proc.is_mounted(self.mnt):
                proc.run(["fusermount3", "-u", self.mnt], timeout=timeout)
            self._wait_daemon_gone()
        except proc.ToolError:
            self._force_unmount()
            raise
        finally:
            self._forget()


def cleanup_all():
    """Unmounts every mount still up, newest first; never raises."""
    for m in reversed(list(LIVE)):
        try:
            m.unmount()
        except BaseException:
            try:
                m._force_unmount()
            except BaseException:
                pass
        m._forget()


def unmount_stale(under):
    """Lazily unmounts leftovers below `under` from an earlier, killed run."""
    prefix = os.path.abspath(under) + "/"
    for mp in proc.mountpoints():
        if mp.startswith(prefix):
            proc.run(["fusermount3", "-u", "-z", mp], timeout=30, check=False)
