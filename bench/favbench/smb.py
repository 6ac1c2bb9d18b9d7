"""Samba smbd on a free loopback port, from a private config, and smbclient sessions to it.

Mirrors Tests/TestSupport/Servers/SambaServer.swift: Samba's defaults but for what a private
instance needs (its port, its own state folders, no NetBIOS, no printers), the served folder
as share `files`, one user `favfs` mapped to root (the harness runs as root, and smbd must).
"""
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time

from . import proc
from .server import free_port, listening

SHARE = "files"
USER = "favfs"
PASSWORD = "favfs-bench-secret"
STATE_DIRS = ["private", "lock", "state", "cache", "pid", "log", "ncalrpc"]


class SambaServer:
    """Serves `files_dir` as smb://favfs@127.0.0.1:PORT/files."""

    kind = "smb"
    description = "Samba smbd on 127.0.0.1"
    user = USER
    password = PASSWORD

    def __init__(self, root, files_dir):
        self.root = os.path.abspath(root)          # config, tdbs, logs
        self.files_dir = os.path.abspath(files_dir)
        self.port = free_port()
        self.conf = os.path.join(self.root, "smb.conf")
        self.process = None
        self._obscured = None

    @property
    def favfs_remote(self):
        return f"smb://{USER}@127.0.0.1:{self.port}/{SHARE}"

    def favfs_login(self):
        """favfs mount's options and stdin for the password."""
        return ["--password-stdin"], PASSWORD + "\n"

    def rclone_remote(self):
        """An on-the-fly :smb: remote (the share is the path's first element); rclone wants
        the password obscured."""
        if self._obscured is None:
            self._obscured = proc.run(["rclone", "obscure", PASSWORD], timeout=30).stdout.strip()
        return [f":smb:{SHARE}", "--smb-host", "127.0.0.1", "--smb-port", str(self.port),
                "--smb-user", USER, "--smb-pass", self._obscured]

    def _write_config(self):
        r = self.root
        for d in STATE_DIRS:
            os.makedirs(os.path.join(r, d), exist_ok=True)
        with open(os.path.join(r, "users.map"), "w") as f:
            f.write(f"root = {USER}\n")
        conf = f"""[global]
    smb ports = {self.port}
    interfaces = 127.0.0.1
    bind interfaces only = yes
    disable netbios = yes
    private dir = {r}/private
    lock directory = {r}/lock
    state directory = {r}/state
    cache directory = {r}/cache
    pid directory = {r}/pid
    ncalrpc dir = {r}/ncalrpc
    log file = {r}/log/smbd.log
    passdb backend = tdbsam:{r}/private/passdb.tdb
    username map = {r}/users.map
    load printers = no
    printing = bsd
    printcap name = /dev/null
    disable spoolss = yes
[{SHARE}]
    path = {self.files_dir}
    read only = no
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    def start(self):
        """Writes a fresh config and user database, starts smbd in its own process group and
        waits until it accepts connections."""
        shutil.rmtree(self.root, ignore_errors=True)  # no tdb of a killed run's smbd
        os.makedirs(self.root)
        self._write_config()
        proc.run(["smbpasswd", "-c", self.conf, "-s", "-a", "root"], stdin=f"{PASSWORD}\n{PASSWORD}\n", timeout=30)
        with open(os.path.join(self.root, "smbd.out"), "w") as out:
            # start_new_session: smbd and the children it forks per connection form one
            # group, so stop() ends them all with one kill.
            self.process = subprocess.Popen(
                ["smbd", "--foreground", "--no-process-group", "--debug-stdout", "-d", "1", f"--configfile={self.conf}"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        if not proc.wait_until(lambda: listening(self.port) or self.process.poll() is not None, 15) \
                or self.process.poll() is not None:
            self.stop()
            raise proc.ToolError(f"smbd is not listening on {self.port}: {self.error_log()}")

    def stop(self):
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        except ProcessLookupError:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # connection children that outlived it
        except ProcessLookupError:
            pass
        self.process = None

    def error_log(self):
        try:
            with open(os.path.join(self.root, "smbd.out")) as f:
                return f.read()[-2000:]
        except FileNotFoundError:
            return ""

    def session(self, timeout):
        return SmbclientSession(self, timeout)


class SmbclientSession:
    """One connected smbclient, fed commands on stdin: what the transport itself can do.

    Commands are timed from when they are written until smbclient answers a `pwd` sent after
    them, so the connection setup (NTLM authentication, tree connect) is outside the time, as
    it is for a mount that is already up. `stdbuf -oL`: smbclient's stdout is a pipe, which
    stdio would otherwise buffer until exit. `-i0`: smbclient polls fd 0 before each command,
    so a line stdio had already buffered would never be read (it hangs); unbuffered, it reads
    a system call per byte of each command line, which counts against smbclient.
    """

    MARK = "Current directory is"

    def __init__(self, server, timeout):
        self.timeout = timeout
        self.p = subprocess.Popen(
            ["stdbuf", "-i0", "-oL", "smbclient", f"//127.0.0.1/{SHARE}", "-p", str(server.port),
             "-U", f"{USER}%{PASSWORD}"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.p.stdout, selectors.EVENT_READ)
        self.pending = b""
        self.writer = None
        try:
            self.send([])
            self.wait()  # connected
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, commands):
        """Writes `commands` and the closing `pwd`, from a thread: thousands of lines fill the
        pipe while smbclient's answers fill the other one, which only wait() drains."""
        data = ("".join(c + "\n" for c in commands) + "pwd\n").encode()
        self.t0 = time.perf_counter()
        self.writer = threading.Thread(target=self._write, args=(data,), daemon=True)
        self.writer.start()

    def _write(self, data):
        try:
            self.p.stdin.write(data)
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # smbclient died or was closed: wait() reports it

    def wait(self):
        """Seconds from send() until smbclient answered every command; ToolError if one
        failed (smbclient keeps going after an error, so its output is checked)."""
        out = self._read_until_mark()
        took = time.perf_counter() - self.t0
        self.writer.join()
        errors = [l for l in out.splitlines() if "NT_STATUS_" in l or "Error opening local file" in l]
        if errors:
            raise proc.ToolError(f"smbclient: {errors[0]} ({len(errors)} errors)")
        return took

    def run(self, commands):
        self.send(commands)
        return self.wait()

    def _read_until_mark(self):
        deadline = time.monotonic() + self.timeout
        mark = self.MARK.encode()
        buf = bytearray(self.pending)
        seen = 0  # searched up to here: a listing of 100,000 entries is megabytes
        while True:
            i = buf.find(mark, max(0, seen - len(mark)))
            if i >= 0:
                j = buf.find(b"\n", i)
                if j >= 0:
                    self.pending = bytes(buf[j + 1:])
                    return buf[:i].decode(errors="replace")
            else:
                seen = len(buf)
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                self.close()
                raise proc.ToolError(f"smbclient: no answer within {self.timeout}s: {buf[-500:].decode(errors='replace')}")
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                self.close()
                raise proc.ToolError(f"smbclient exited: {buf[-1000:].decode(errors='replace')}")
            buf += chunk

    def close(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.p.wait(timeout=10)
        self.sel.close()
