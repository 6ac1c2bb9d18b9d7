"""vsftpd on a free loopback port, from a private config, for the FTP read cases.

Mirrors Tests/TestSupport/Servers/VsftpdServer.swift: Debian's vsftpd in its default
configuration but for what a private instance needs (its port, in the foreground, local users,
chrooted to the served root), one system user `favfs-ftp` that PAM checks (made if missing,
the one the tests use). So: LIST only (no MLSD/MLST), as Debian ships it.

Its data is its own (WORKDIR/ftp/root/files): 100 files of 1 MiB (`ones`) and 300 files of 1 KB
to 3 MB (`mixed`, 112 MB), the two shapes the FTP read issue measured.
"""
import os
import random
import subprocess

from . import proc
from .server import free_port, listening

BINARY = "/usr/sbin/vsftpd"
USER = "favfs-ftp"
PASSWORD = "vsftpd-secret"
HOME = "/var/tmp/favfs-ftp-home"
MiB = 1 << 20

SETS = {
    # name: (count, size of file i in bytes)
    "ones": (100, lambda i, rng: MiB),
    # Sizes spread over three decades (log-uniform), as a folder of documents and photos is.
    "mixed": (300, lambda i, rng: int(10 ** rng.uniform(3, 6.5))),
}


class VsftpdServer:
    """Serves WORKDIR/ftp/root/files as ftp://favfs-ftp@127.0.0.1:PORT/files/."""

    description = "vsftpd on 127.0.0.1 (LIST only, Debian's defaults)"

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.ftp_root = os.path.join(self.root, "root")
        self.files = os.path.join(self.ftp_root, "files")
        self.port = None
        self.process = None
        self._obscured = None

    # -- data ------------------------------------------------------------------------------
    def ensure_data(self, log=print):
        """Generates the sets once (a marker file says a set is whole)."""
        for name, (count, size) in SETS.items():
            folder = os.path.join(self.files, name)
            marker = os.path.join(self.root, f".{name}.done")
            if os.path.exists(marker):
                continue
            log(f"generating FTP set {name} ({count} files)")
            proc.discard(folder)
            os.makedirs(folder)
            rng = random.Random(name)
            for i in range(count):
                with open(os.path.join(folder, f"{name[0]}{i:03d}.bin"), "wb") as f:
                    f.write(os.urandom(size(i, rng)))
            open(marker, "w").close()

    def set_files(self, name):
        """The files of a set, relative to the served folder, in name order."""
        return [f"{name}/{n}" for n in sorted(os.listdir(os.path.join(self.files, name)))]

    def set_bytes(self, name):
        return sum(os.path.getsize(os.path.join(self.files, r)) for r in self.set_files(name))

    # -- server ----------------------------------------------------------------------------
    def _make_user(self):
        if subprocess.run(["id", USER], capture_output=True).returncode != 0:
            cp = proc.run(["useradd", "--system", "--home-dir", HOME, "--shell", "/bin/sh", USER], check=False)
            if cp.returncode not in (0, 9):
                raise proc.ToolError(f"useradd {USER}: {cp.stderr}")
        os.makedirs(HOME, exist_ok=True)
        proc.run(["chpasswd"], stdin=f"{USER}:{PASSWORD}\n")

    def start(self):
        if not os.access(BINARY, os.X_OK):
            raise proc.ToolError(f"not installed: {BINARY} (make setup)")
        self._make_user()
        empty = os.path.join(self.root, "empty")
        os.makedirs(empty, exist_ok=True)
        for d in (self.root, self.ftp_root):
            os.chmod(d, 0o755)
        self.port = free_port()
        conf = os.path.join(self.root, "vsftpd.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "listen=YES", "listen_ipv6=NO", "listen_address=127.0.0.1", f"listen_port={self.port}",
                "background=NO", "anonymous_enable=NO", "local_enable=YES", "chroot_local_user=YES",
                f"local_root={self.ftp_root}", f"secure_chroot_dir={empty}", "pam_service_name=vsftpd",
                "seccomp_sandbox=NO", "xferlog_enable=YES", f"vsftpd_log_file={self.log_path}", ""]))
        self.process = subprocess.Popen([BINARY, conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        if not proc.wait_until(lambda: listening(self.port), 10):
            self.stop()
            raise proc.ToolError(f"vsftpd is not listening on {self.port}")

    @property
    def log_path(self):
        return os.path.join(self.root, "vsftpd.log")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None

    # -- clients ---------------------------------------------------------------------------
    def url(self, rel):
        """A URL for curl, with the password (curl's -u would do the same)."""
        return f"ftp://{USER}:{PASSWORD}@127.0.0.1:{self.port}/files/{rel}"

    @property
    def favfs_remote(self):
        return f"ftp://{USER}@127.0.0.1:{self.port}/files/"

    def favfs_login(self):
        return ["--password-stdin"], PASSWORD + "\n"

    def rclone_remote(self):
        """An on-the-fly :ftp: remote; the path is below the login's (chrooted) root."""
        if self._obscured is None:
            self._obscured = proc.run(["rclone", "obscure", PASSWORD], timeout=30).stdout.strip()
        return [":ftp:files", "--ftp-host", "127.0.0.1", "--ftp-port", str(self.port),
                "--ftp-user", USER, "--ftp-pass", self._obscured]
