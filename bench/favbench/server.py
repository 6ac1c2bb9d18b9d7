"""Apache httpd with mod_dav on a free loopback port, from a private config.

Mirrors Tests/TestSupport/ApacheServer.swift: Debian's modules, `User www-data` (Apache will
not run workers as root), a served folder that www-data owns, a DAV lock database.
"""
import os
import pwd
import shutil
import socket
import time

from . import proc

MODULES = "/usr/lib/apache2/modules"
LOAD = [
    "mpm_event", "authn_core", "authz_core", "alias", "dav", "dav_fs",
    "autoindex", "dir", "log_config", "unixd", "mime",
]


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class ApacheServer:
    """Serves `files_dir` as WebDAV at http://127.0.0.1:PORT/files/."""

    kind = "dav"
    description = "Apache mod_dav on 127.0.0.1"

    def __init__(self, root, files_dir):
        self.root = os.path.abspath(root)          # config, logs, pid, lock db
        self.files_dir = os.path.abspath(files_dir)
        self.port = free_port()
        self.conf = os.path.join(self.root, "httpd.conf")
        self.running = False

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/files/"

    @property
    def dav_url(self):
        return f"dav://127.0.0.1:{self.port}/files/"

    @property
    def favfs_remote(self):
        return self.dav_url

    def favfs_login(self):
        """favfs mount's options and stdin for a password: none, the share is open."""
        return [], None

    def rclone_remote(self):
        """rclone mount's remote: an on-the-fly :webdav: one."""
        return [":webdav:", "--webdav-url", self.url]

    def _write_config(self):
        os.makedirs(os.path.join(self.root, "lock"), exist_ok=True)
        os.makedirs(os.path.join(self.root, "docroot"), exist_ok=True)
        # Modules compiled into Debian's apache2 (log_config, unixd) have no .so to load.
        mods = "\n".join(f"LoadModule {m}_module {MODULES}/mod_{m}.so" for m in LOAD
                         if os.path.exists(f"{MODULES}/mod_{m}.so"))
        r = self.root
        conf = f"""ServerRoot "{r}"
ServerName 127.0.0.1
Listen 127.0.0.1:{self.port}
PidFile {r}/httpd.pid
ErrorLog {r}/error.log
LogLevel warn
User www-data
Group www-data
{mods}
TypesConfig /etc/mime.types
LogFormat "%m %U%q %>s %B \\"%{{Range}}i\\"" bench
CustomLog {r}/access.log bench
DAVLockDB {r}/lock/DAVLock
Timeout 60
KeepAlive On
MaxKeepAliveRequests 0
StartServers 1
ThreadsPerChild 25
MaxRequestWorkers 50
DocumentRoot "{r}/docroot"
Alias /files "{self.files_dir}"
<Directory "{self.files_dir}">
    DAV On
    Options +Indexes
    AllowOverride None
    DirectoryIndex disabled
    Require all granted
</Directory>
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    def start(self):
        """Starts httpd and waits until it accepts connections."""
        os.makedirs(self.root, exist_ok=True)
        self._write_config()
        www = pwd.getpwnam("www-data")
        # The lock folder must be www-data's; the data stays root's but world-readable,
        # so generating it once and reusing it needs no recursive chown of 100k files.
        os.chown(os.path.join(self.root, "lock"), www.pw_uid, www.pw_gid)
        os.chmod(self.root, 0o755)
        # One run's requests only, so the log can be read to see what a tool asked for.
        open(os.path.join(self.root, "access.log"), "w").close()
        pid = os.path.join(self.root, "httpd.pid")
        if os.path.exists(pid):
            os.unlink(pid)
        proc.run(["/usr/sbin/apache2", "-f", self.conf, "-k", "start"], timeout=30)
        self.running = True
        if not proc.wait_until(lambda: listening(self.port), 10):
            raise proc.ToolError(f"apache2 is not listening on {self.port}: {self.error_log()}")

    def stop(self):
        """Stops httpd and waits until its port is closed and its pid file gone."""
        if not self.running:
            return
        proc.run(["/usr/sbin/apache2", "-f", self.conf, "-k", "stop"], timeout=30, check=False)
        proc.wait_until(lambda: not listening(self.port), 10)
        proc.wait_until(lambda: not os.path.exists(os.path.join(self.root, "httpd.pid")), 10)
        self.running = False

    def error_log(self):
        try:
            with open(os.path.join(self.root, "error.log")) as f:
                return f.read()[-2000:]
        except FileNotFoundError:
            return ""
