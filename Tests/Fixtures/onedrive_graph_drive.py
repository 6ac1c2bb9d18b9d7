#!/usr/bin/env python3
"""The drive of the Microsoft Graph fixture (`onedrive_graph_server.py`): one folder of the local
disk as the signed-in user's drive. Paths resolved without case, stable ids per (device, inode),
eTag and cTag, driveItem resources, Graph's error resource, OneDrive's name rules, and the tree
snapshots delta compares. Python 3 standard library only."""
import calendar
import hashlib
import os
import secrets
import tempfile
import threading
import time
from collections import OrderedDict


FRAGMENT_UNIT = 320 * 1024
MAX_FRAGMENT = 60 * 1024 * 1024
FORBIDDEN = set('"*:<>?/\\|')
RESERVED = {".lock", "con", "prn", "aux", "nul", "desktop.ini"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}


class GraphError(Exception):
    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def not_found(path):
    return GraphError(404, "itemNotFound", f"The resource could not be found: {path}")


def name_problem(name):
    if not name or name in (".", ".."):
        return "The name is empty or reserved."
    if any(c in FORBIDDEN for c in name):
        return "The provided name contains invalid characters."
    if name != name.strip(" ") or name.endswith("."):
        return "The provided name cannot begin or end with a space, or end with a period."
    low = name.lower()
    if low in RESERVED or "_vti_" in low or name.startswith("~$"):
        return "The provided name is reserved."
    return None


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t)))


def parse_iso(text):
    base = text.rstrip("Z").split(".")[0]
    return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S"))


def short_hash(*parts):
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:16].upper()


class Drive:
    def __init__(self, root, page_size):
        self.root = os.path.realpath(root)
        self.staging = tempfile.mkdtemp(prefix=".onedrive-staging-", dir=os.path.dirname(self.root))
        self.lock = threading.RLock()
        self.page_size = page_size
        self.ids = {}            # (dev, ino) -> id
        self.next_id = 1
        self.ctag_alias = {}     # (ino, size, mtime_ns) after a PATCH of the time -> the cTag before
        self.snapshots = OrderedDict()  # delta token -> {id: (parent id, name, eTag, kind)}
        self.pending = {}        # delta page key -> (entries, next token)
        self.downloads = {}      # download token -> (disk path, ino, cTag)
        self.sessions = {}       # upload session -> dict
        self.monitors = {}       # copy monitor -> {"polls", "id"}

    # -- paths

    def resolve(self, path):
        """Disk path of a drive path ("" or "/a/b"), matching names without case; None if missing."""
        disk = self.root
        for comp in [c for c in path.split("/") if c]:
            if not os.path.isdir(disk):
                return None
            if os.path.lexists(os.path.join(disk, comp)):
                disk = os.path.join(disk, comp)
                continue
            match = next((n for n in os.listdir(disk) if n.lower() == comp.lower()), None)
            if match is None:
                return None
            disk = os.path.join(disk, match)
        return disk

    def existing(self, path):
        disk = self.resolve(path)
        if disk is None:
            raise not_found(path or "/")
        return disk

    def display(self, disk):
        rel = os.path.relpath(disk, self.root)
        return "" if rel == "." else "/" + rel

    def target(self, path):
        """(disk path to write, existing disk path or None) for a path whose parent must be a folder."""
        parts = [c for c in path.split("/") if c]
        if not parts:
            raise GraphError(400, "invalidRequest", "The root cannot be replaced.")
        parent = self.resolve("/" + "/".join(parts[:-1]))
        if parent is None or not os.path.isdir(parent):
            raise not_found("/" + "/".join(parts[:-1]))
        problem = name_problem(parts[-1])
        if problem:
            raise GraphError(400, "invalidRequest", problem)
        existing = self.resolve(path)
        return (existing or os.path.join(parent, parts[-1])), existing

    # -- items

    def item_id(self, st, disk=None):
        if disk == self.root:
            return "ROOT"
        key = (st.st_dev, st.st_ino)
        if key not in self.ids:
            self.ids[key] = f"FIXTURE!{self.next_id}"
            self.next_id += 1
        return self.ids[key]

    def ctag(self, st):
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        return self.ctag_alias.get(key) or f'"c:{{{short_hash("c", *key)}}},1"'

    def etag(self, st, disk):
        return f'"{{{short_hash("e", st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, self.display(disk))}}},1"'

    def tags_match(self, header, disk):
        """If-Match against the current eTag or cTag ("*": anything there)."""
        if disk is None:
            return False
        if header.strip() == "*":
            return True
        st = os.stat(disk)
        # One tag: Graph's tags hold a comma themselves ("{GUID},1"), so the header is not split.
        return header.strip() in (self.etag(st, disk), self.ctag(st))

    def drive_item(self, disk, with_path=True):
        st = os.stat(disk)
        item = {
            "id": self.item_id(st, disk),
            "name": "root" if disk == self.root else os.path.basename(disk),
            "eTag": self.etag(st, disk),
            "createdDateTime": iso(st.st_ctime),
            "lastModifiedDateTime": iso(st.st_mtime),
            "fileSystemInfo": {"createdDateTime": iso(st.st_ctime), "lastModifiedDateTime": iso(st.st_mtime)},
        }
        if disk == self.root:
            item["root"] = {}
        else:
            parent = os.path.dirname(disk)
            ref = {"driveId": "fixture-drive", "driveType": "personal", "id": self.item_id(os.stat(parent), parent)}
            if with_path:
                ref["path"] = "/drive/root:" + self.display(parent)
            item["parentReference"] = ref
        if os.path.isdir(disk):
            item["folder"] = {"childCount": len(os.listdir(disk))}
            item["size"] = 0
        else:
            item["cTag"] = self.ctag(st)
            item["size"] = st.st_size
            item["file"] = {"mimeType": "application/octet-stream"}
        return item

    # -- delta

    def snapshot(self):
        snap = {}
        for folder, dirs, files in os.walk(self.root):
            try:
                pid = self.item_id(os.stat(folder), folder)
            except OSError:
                continue  # deleted while the tree is walked
            for name in dirs + files:
                disk = os.path.join(folder, name)
                try:
                    st = os.stat(disk)
                except OSError:
                    continue
                snap[self.item_id(st, disk)] = (pid, name, self.etag(st, disk), disk)
        return snap

    def remember(self, snap):
        token = secrets.token_urlsafe(12)
        self.snapshots[token] = snap
        while len(self.snapshots) > 64:
            self.snapshots.popitem(last=False)
        return token
