#!/usr/bin/env python3
"""A fixture server for the part of Microsoft Graph v1.0's driveItem API that favfs uses,
written from Microsoft's published documentation (driveItem, list children, get content,
upload small files, createUploadSession, update, delete, copy, delta, drive, error responses,
throttling) and the identity platform's OAuth 2 token endpoint. Python 3 standard library only.
It serves one folder of the local disk as the signed-in user's drive, so tests seed and change
files directly, as another client would.

Graph (bearer token required; items addressed by path, the drive's root is `root`):
  GET    /v1.0/me/drive                                   drive with quota {total, used, remaining}
  GET    /v1.0/me/drive/root  |  /root:/a/b:              driveItem
  GET    /v1.0/me/drive/root/children | /root:/a:/children   ?$top=N (default --page-size), @odata.nextLink
  GET    /v1.0/me/drive/root:/a:/content                  302 to /download/<token>; If-Match: eTag or cTag (412)
  PUT    /v1.0/me/drive/root:/a:/content                  ?@microsoft.graph.conflictBehavior=fail|replace, If-Match (412)
  POST   /v1.0/me/drive/root:/a:/createUploadSession      {"item": {"@microsoft.graph.conflictBehavior"}}, If-Match
  POST   /v1.0/me/drive/root:/a:/children                 {"name", "folder": {}, "@microsoft.graph.conflictBehavior"}
  PATCH  /v1.0/me/drive/root:/a:                          {"name", "parentReference": {"path": "/drive/root:/b"},
                                                           "fileSystemInfo": {"lastModifiedDateTime"}}, If-Match
  DELETE /v1.0/me/drive/root:/a:                          204 (a folder goes with everything in it, as at Graph)
  POST   /v1.0/me/drive/root:/a:/copy                     {"parentReference": {"path"}, "name"} -> 202, Location: /monitor/<id>
  GET    /v1.0/me/drive/root/delta                        ?token=latest | ?token=T -> value, @odata.nextLink | @odata.deltaLink
Pre-authenticated (no Authorization header; one that carries it is refused with 400):
  GET    /download/<token>                                Range honoured (206); 410 once the file's content changed
  PUT    /upload/<session>                                Content-Range: bytes a-b/total; fragments a multiple of
                                                          320 KiB but the last, at most 60 MiB; 202 nextExpectedRanges
  DELETE /upload/<session>                                cancels the session
  GET    /monitor/<id>                                    {"status": "inProgress"} once, then "completed" with resourceId
OAuth:
  POST   /common/oauth2/v2.0/token                        grant_type=refresh_token&refresh_token&client_id&scope
Test control (no authentication):
  POST   /_control/throttle?count=N&retry_after=S         the next N Graph requests get 429 with Retry-After: S
  POST   /_control/resync                                 every delta token given so far answers 410 resyncRequired

Ids are stable per file: an index keyed by (device, inode) gives each one an id when first
seen, so a rename keeps it. The cTag changes when the content changes (size, mtime, inode);
setting the time through PATCH keeps it (the fixture remembers the alias). The eTag changes on
every content or metadata change (it also covers ctime and the path). Delta compares snapshots
of the whole tree (id -> parent id, name, eTag), so changes made on disk are seen; it keeps the
last 64 snapshots, an older token is 410 resyncRequired. Names are case-insensitive and
case-preserving; names OneDrive refuses (" * : < > ? / \\ |, leading or trailing spaces, a
trailing dot, reserved names) are 400 invalidRequest. Errors are Graph's error resource
{"error": {"code", "message"}}. Access tokens live --token-lifetime seconds (an expired one is
401 InvalidAuthenticationToken); each refresh also returns a new refresh token, the old one
staying valid.

Usage: onedrive_graph_server.py ROOT --port PORT [--refresh-token T] [--client-id ID]
       [--token-lifetime S] [--stated-lifetime S] [--throttle N] [--retry-after S] [--page-size N]
Every request is logged to stderr, one line each, after the time (1764213000.123 "PUT /upload/… HTTP/1.1" 202 -).
"""
import argparse
import calendar
import hashlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%.3f %s\n" % (time.time(), fmt % args))

    # -- plumbing

    @property
    def drive(self):
        return self.server.drive

    @property
    def base(self):
        return f"http://{self.headers.get('Host', '127.0.0.1')}"

    def send(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, obj, headers=None):
        self.send(status, json.dumps(obj).encode(), headers)

    def body_bytes(self):
        if self.consumed:
            return b""
        self.consumed = True
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def body_json(self):
        raw = self.body_bytes()
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise GraphError(400, "invalidRequest", "The body is not JSON.")

    def body_to_file(self, out):
        self.consumed = True
        n = int(self.headers.get("Content-Length") or 0)
        left = n
        while left > 0:
            chunk = self.rfile.read(min(1 << 20, left))
            if not chunk:
                break
            out.write(chunk)
            left -= len(chunk)
        return n - left

    def authenticate(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        expiry = self.server.tokens.get(token) if token else None
        if expiry is None or expiry < time.time():
            raise GraphError(401, "InvalidAuthenticationToken",
                             "Access token has expired or is not yet valid." if expiry else "Access token is empty or not valid.",
                             {"WWW-Authenticate": 'Bearer realm=""'})

    def throttled(self):
        with self.server.counter_lock:
            if self.server.throttle > 0:
                self.server.throttle -= 1
                return True
        return False

    def pre_authenticated(self):
        if self.headers.get("Authorization"):
            raise GraphError(400, "invalidRequest", "Pre-authenticated URLs take no Authorization header.")

    # -- dispatch

    def do_GET(self):
        self.dispatch("GET")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_POST(self):
        self.dispatch("POST")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def dispatch(self, method):
        self.consumed = False
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        raw = url.path
        try:
            if raw == "/common/oauth2/v2.0/token" and method == "POST":
                return self.token()
            if raw.startswith("/_control/"):
                return self.control(raw[len("/_control/"):], query)
            if raw.startswith("/download/") and method == "GET":
                return self.download(raw[len("/download/"):])
            if raw.startswith("/upload/"):
                return self.fragment(method, raw[len("/upload/"):])
            if raw.startswith("/monitor/") and method == "GET":
                return self.monitor(raw[len("/monitor/"):])
            if not raw.startswith("/v1.0/"):
                raise GraphError(404, "invalidRequest", f"No route {raw}")
            if self.throttled():
                self.body_bytes()
                raise GraphError(429, "activityLimitReached", "The app or user has been throttled.",
                                 {"Retry-After": str(self.server.retry_after)})
            self.authenticate()
            rest = raw[len("/v1.0/me/drive"):] if raw.startswith("/v1.0/me/drive") else None
            if rest is None:
                raise GraphError(400, "invalidRequest", f"Unsupported resource {raw}")
            if rest == "" and method == "GET":
                return self.drive_resource()
            path, action = self.address(rest)
            with self.drive.lock:
                self.route(method, path, action, query)
        except (OSError, ValueError, KeyError, TypeError) as e:
            # A file changed under the request (tests change the disk as another client does):
            # a 500 the client can retry, not a dropped connection.
            self.body_bytes()
            self.send_json(500, {"error": {"code": "generalException", "message": f"{type(e).__name__}: {e}"}})
        except GraphError as e:
            self.body_bytes()  # what a refused request sent must not be read as the next request
            self.send_json(e.status, {"error": {"code": e.code, "message": e.message,
                                                "innerError": {"date": iso(time.time()), "request-id": secrets.token_hex(8)}}}, e.headers)

    def address(self, rest):
        """(drive path, action) from `/root`, `/root/children`, `/root:/a/b:`, `/root:/a/b:/content`."""
        if rest == "/root" or rest.startswith("/root/"):
            return "", rest[len("/root/"):] if rest.startswith("/root/") else ""
        if rest.startswith("/root:"):
            tail = rest[len("/root:"):]
            end = tail.find(":")
            encoded, after = (tail, "") if end < 0 else (tail[:end], tail[end + 1:])
            path = urllib.parse.unquote(encoded)
            return path.rstrip("/"), after.lstrip("/")
        raise GraphError(400, "invalidRequest", f"Unsupported address {rest}")

    def route(self, method, path, action, query):
        behaviour = query.get("@microsoft.graph.conflictBehavior", "fail")
        if method == "GET" and action == "":
            return self.send_json(200, self.drive.drive_item(self.drive.existing(path)))
        if method == "GET" and action == "children":
            return self.children(path, query)
        if method == "GET" and action == "delta" and path == "":
            return self.delta(query)
        if method == "GET" and action == "content":
            return self.content(path)
        if method == "PUT" and action == "content":
            return self.put_content(path, behaviour)
        if method == "POST" and action == "createUploadSession":
            return self.create_session(path)
        if method == "POST" and action == "children":
            return self.create_folder(path)
        if method == "PATCH" and action == "":
            return self.update(path, behaviour)
        if method == "DELETE" and action == "":
            return self.delete(path)
        if method == "POST" and action == "copy":
            return self.copy(path, behaviour)
        raise GraphError(400, "invalidRequest", f"Unsupported {method} {action or 'item'}")

    # -- OAuth and control

    def token(self):
        form = dict(urllib.parse.parse_qsl(self.body_bytes().decode()))
        if form.get("grant_type") != "refresh_token":
            return self.send_json(400, {"error": "unsupported_grant_type", "error_description": "AADSTS70003: grant_type must be refresh_token."})
        if form.get("client_id") != self.server.client_id:
            return self.send_json(400, {"error": "unauthorized_client",
                                        "error_description": f"AADSTS700016: Application with identifier '{form.get('client_id')}' was not found in the directory."})
        if "Files.ReadWrite" not in form.get("scope", "") or "offline_access" not in form.get("scope", ""):
            return self.send_json(400, {"error": "invalid_scope", "error_description": "AADSTS70011: The scope must name offline_access and Files.ReadWrite."})
        with self.server.counter_lock:
            if form.get("refresh_token") not in self.server.refresh_tokens:
                return self.send_json(400, {"error": "invalid_grant",
                                            "error_description": "AADSTS70000: The provided value for the 'refresh_token' is not valid."})
            access = secrets.token_urlsafe(24)
            self.server.tokens[access] = time.time() + self.server.lifetime
            rotated = "fixture-rotated-" + secrets.token_urlsafe(12)
            self.server.refresh_tokens.add(rotated)
        stated = self.server.stated_lifetime or self.server.lifetime
        self.send_json(200, {"token_type": "Bearer", "scope": "Files.ReadWrite", "expires_in": int(stated),
                             "access_token": access, "refresh_token": rotated})

    def control(self, what, query):
        self.body_bytes()
        if what == "throttle":
            with self.server.counter_lock:
                self.server.throttle = int(query.get("count", "1"))
                self.server.retry_after = int(query.get("retry_after", "1"))
        elif what == "resync":
            with self.drive.lock:
                self.drive.snapshots.clear()
                self.drive.pending.clear()
        else:
            raise GraphError(404, "invalidRequest", f"No control {what}")
        self.send(204)

    # -- reading

    def drive_resource(self):
        used = 0
        for folder, _, files in os.walk(self.drive.root):
            for name in files:
                try:
                    used += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    pass
        total = self.server.quota_total
        self.send_json(200, {"id": "fixture-drive", "driveType": "personal",
                             "quota": {"total": total, "used": used, "remaining": max(0, total - used), "deleted": 0, "state": "normal"}})

    def children(self, path, query):
        disk = self.drive.existing(path)
        if not os.path.isdir(disk):
            raise GraphError(400, "invalidRequest", "The item is not a folder.")
        top = int(query.get("$top") or self.drive.page_size)
        skip = int(query.get("$skiptoken") or 0)
        names = sorted(os.listdir(disk))
        if path == "":
            names = [n for n in names if not n.startswith(".onedrive-staging-")]
        value = []
        for name in names[skip:skip + top]:
            try:
                value.append(self.drive.drive_item(os.path.join(disk, name)))
            except OSError:
                continue  # gone since the listing
        body = {"value": value}
        if skip + top < len(names):
            address = "/me/drive/root" if path == "" else "/me/drive/root:" + urllib.parse.quote(path) + ":"
            body["@odata.nextLink"] = f"{self.base}/v1.0{address}/children?$top={top}&$skiptoken={skip + top}"
        self.send_json(200, body)

    def content(self, path):
        disk = self.drive.existing(path)
        if os.path.isdir(disk):
            raise GraphError(400, "invalidRequest", "Only files have content.")
        match = self.headers.get("If-Match")
        if match and not self.drive.tags_match(match, disk):
            raise GraphError(412, "preconditionFailed", "The resource has changed since the caller last read it (If-Match).")
        st = os.stat(disk)
        token = secrets.token_urlsafe(16)
        self.drive.downloads[token] = (disk, st.st_ino, self.drive.ctag(st))
        self.send(302, b"", {"Location": f"{self.base}/download/{token}"})

    def download(self, token):
        self.pre_authenticated()
        with self.drive.lock:
            entry = self.drive.downloads.get(token)
            if entry is None:
                raise GraphError(404, "itemNotFound", "No such download URL.")
            disk, ino, ctag = entry
            try:
                st = os.stat(disk)
                f = open(disk, "rb")
            except OSError:
                raise GraphError(410, "resourceModified", "The file is gone.")
            if st.st_ino != ino or self.drive.ctag(st) != ctag:
                f.close()
                raise GraphError(410, "resourceModified", "The file's content changed since this URL was made.")
        with f:
            size = st.st_size
            start, end, status = 0, size - 1, 200
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes="):
                a, _, b = rng[len("bytes="):].partition("-")
                start = int(a)
                end = min(int(b), size - 1) if b else size - 1
                if start >= size:
                    return self.send(416, b"", {"Content-Range": f"bytes */{size}"}, "text/plain")
                status = 206
            f.seek(start)
            data = f.read(max(0, end - start + 1))
        headers = {"Content-Range": f"bytes {start}-{end}/{size}"} if status == 206 else {}
        headers["ETag"] = ctag
        self.send(status, data, headers, "application/octet-stream")

    # -- writing

    def check_write(self, path, behaviour, match=None):
        """(disk path, existing) for a write to `path`, If-Match and the conflict behaviour checked."""
        disk, existing = self.drive.target(path)
        match = match or self.headers.get("If-Match")
        if match and not self.drive.tags_match(match, existing):
            raise GraphError(412, "preconditionFailed", "The resource has changed since the caller last read it (If-Match).")
        if existing and os.path.isdir(existing):
            raise GraphError(409, "nameAlreadyExists", "A folder with this name already exists.")
        if existing and behaviour == "fail":
            raise GraphError(409, "nameAlreadyExists", "The specified item name already exists.")
        if behaviour not in ("fail", "replace"):
            raise GraphError(400, "invalidRequest", f"The fixture has no conflictBehavior {behaviour}.")
        return disk, existing

    def commit(self, staged, disk, existing):
        os.replace(staged, disk)
        self.send_json(200 if existing else 201, self.drive.drive_item(disk))

    def put_content(self, path, behaviour):
        fd, staged = tempfile.mkstemp(dir=self.drive.staging)
        try:
            with os.fdopen(fd, "wb") as out:
                self.body_to_file(out)
            disk, existing = self.check_write(path, behaviour)
            self.commit(staged, disk, existing)
        finally:
            if os.path.exists(staged):
                os.unlink(staged)

    def create_session(self, path):
        body = self.body_json()
        behaviour = (body.get("item") or {}).get("@microsoft.graph.conflictBehavior", "fail")
        self.check_write(path, behaviour)
        sid = secrets.token_urlsafe(16)
        fd, staged = tempfile.mkstemp(dir=self.drive.staging)
        os.close(fd)
        self.drive.sessions[sid] = {"path": path, "behaviour": behaviour, "match": self.headers.get("If-Match"),
                                    "file": staged, "received": 0}
        self.send_json(200, {"uploadUrl": f"{self.base}/upload/{sid}", "expirationDateTime": iso(time.time() + 3600),
                             "nextExpectedRanges": ["0-"]})

    def fragment(self, method, sid):
        self.pre_authenticated()
        with self.drive.lock:
            s = self.drive.sessions.get(sid)
        if s is None:
            self.body_bytes()
            raise GraphError(404, "itemNotFound", "The upload session does not exist or expired.")
        if method == "DELETE":
            with self.drive.lock:
                self.drive.sessions.pop(sid, None)
            os.unlink(s["file"])
            return self.send(204)
        if method != "PUT":
            raise GraphError(405, "notAllowed", "Upload sessions take PUT and DELETE.")
        spec = self.headers.get("Content-Range", "")
        try:
            first, _, rest = spec[len("bytes "):].partition("-")
            last, _, total = rest.partition("/")
            first, last, total = int(first), int(last), int(total)
        except ValueError:
            self.body_bytes()
            raise GraphError(400, "invalidRequest", f"Bad Content-Range '{spec}'.")
        length = last - first + 1
        if first != s["received"]:
            self.body_bytes()
            raise GraphError(416, "invalidRange", f"Expected the fragment at {s['received']}, got {first}.")
        if length > MAX_FRAGMENT or (last + 1 < total and length % FRAGMENT_UNIT != 0):
            self.body_bytes()
            raise GraphError(400, "invalidRequest", f"A fragment of {length} bytes: fragments must be a multiple of 320 KiB (but the last), at most 60 MiB.")
        with open(s["file"], "ab") as out:
            got = self.body_to_file(out)
        if got != length:
            raise GraphError(400, "invalidRequest", f"Content-Range says {length} bytes, the body had {got}.")
        s["received"] += length
        if s["received"] < total:
            return self.send_json(202, {"expirationDateTime": iso(time.time() + 3600), "nextExpectedRanges": [f"{s['received']}-"]})
        with self.drive.lock:
            self.drive.sessions.pop(sid, None)
            try:
                # The conflict behaviour and If-Match are checked again as the file is committed.
                disk, existing = self.check_write(s["path"], s["behaviour"], s["match"])
                self.commit(s["file"], disk, existing)
            finally:
                if os.path.exists(s["file"]):
                    os.unlink(s["file"])

    def create_folder(self, path):
        body = self.body_json()
        parent = self.drive.existing(path)
        name = body.get("name", "")
        if "folder" not in body:
            raise GraphError(400, "invalidRequest", "Only folders are made with POST children here.")
        problem = name_problem(name)
        if problem:
            raise GraphError(400, "invalidRequest", problem)
        if self.drive.resolve(path + "/" + name):
            raise GraphError(409, "nameAlreadyExists", "The specified item name already exists.")
        os.mkdir(os.path.join(parent, name))
        self.send_json(201, self.drive.drive_item(os.path.join(parent, name)))

    def delete(self, path):
        disk = self.drive.existing(path)
        if disk == self.drive.root:
            raise GraphError(403, "accessDenied", "The root cannot be deleted.")
        match = self.headers.get("If-Match")
        if match and not self.drive.tags_match(match, disk):
            raise GraphError(412, "preconditionFailed", "The resource has changed (If-Match).")
        if os.path.isdir(disk) and not os.path.islink(disk):
            shutil.rmtree(disk)
        else:
            os.unlink(disk)
        self.send(204)

    def destination(self, ref, name, source):
        """Disk path for `name` in the folder `ref` names ({"path": "/drive/root:/a"} or {"id"})."""
        if ref is None:
            folder = os.path.dirname(source)
        elif "path" in ref:
            p = urllib.parse.unquote(ref["path"])
            if not p.startswith("/drive/root:"):
                raise GraphError(400, "invalidRequest", f"Unsupported parentReference path {p}")
            folder = self.drive.existing(p[len("/drive/root:"):])
        elif "id" in ref:
            folder = next((d for _, (_, _, _, d) in self.drive.snapshot().items() if self.drive.item_id(os.stat(d), d) == ref["id"]), None)
            if ref["id"] == "ROOT":
                folder = self.drive.root
            if folder is None:
                raise not_found(ref["id"])
        else:
            raise GraphError(400, "invalidRequest", "parentReference needs a path or an id.")
        if not os.path.isdir(folder):
            raise GraphError(400, "invalidRequest", "The parent is not a folder.")
        problem = name_problem(name)
        if problem:
            raise GraphError(400, "invalidRequest", problem)
        return folder, name

    def update(self, path, behaviour):
        body = self.body_json()
        disk = self.drive.existing(path)
        match = self.headers.get("If-Match")
        if match and not self.drive.tags_match(match, disk):
            raise GraphError(412, "preconditionFailed", "The resource has changed (If-Match).")
        if "name" in body or "parentReference" in body:
            if disk == self.drive.root:
                raise GraphError(400, "invalidRequest", "The root cannot be moved.")
            folder, name = self.destination(body.get("parentReference"), body.get("name", os.path.basename(disk)), disk)
            target = os.path.join(folder, name)
            other = next((os.path.join(folder, n) for n in os.listdir(folder) if n.lower() == name.lower()), None)
            if other and os.path.realpath(other) != os.path.realpath(disk):
                if behaviour != "replace" or os.path.isdir(other):
                    raise GraphError(409, "nameAlreadyExists", "The specified item name already exists.")
                os.unlink(other)
            if os.path.isdir(disk) and (os.path.realpath(folder) + "/").startswith(os.path.realpath(disk) + "/"):
                raise GraphError(400, "invalidRequest", "A folder cannot move into itself.")
            if os.path.realpath(target) != os.path.realpath(disk) or os.path.basename(disk) != name:
                os.rename(disk, target)
            disk = target
        fs = body.get("fileSystemInfo") or {}
        if "lastModifiedDateTime" in fs:
            st = os.stat(disk)
            before = self.drive.ctag(st)
            when = parse_iso(fs["lastModifiedDateTime"])
            os.utime(disk, ns=(st.st_atime_ns, when * 1_000_000_000))
            after = os.stat(disk)
            self.drive.ctag_alias[(after.st_ino, after.st_size, after.st_mtime_ns)] = before
        self.send_json(200, self.drive.drive_item(disk))

    def copy(self, path, behaviour):
        body = self.body_json()
        disk = self.drive.existing(path)
        folder, name = self.destination(body.get("parentReference"), body.get("name", os.path.basename(disk)), disk)
        if next((n for n in os.listdir(folder) if n.lower() == name.lower()), None):
            raise GraphError(409, "nameAlreadyExists", "The specified item name already exists.")
        target = os.path.join(folder, name)
        if os.path.isdir(disk):
            shutil.copytree(disk, target)
        else:
            shutil.copyfile(disk, target)
        mid = secrets.token_urlsafe(12)
        self.drive.monitors[mid] = {"polls": 0, "id": self.drive.item_id(os.stat(target), target)}
        self.send(202, b"", {"Location": f"{self.base}/monitor/{mid}"})

    def monitor(self, mid):
        self.pre_authenticated()
        with self.drive.lock:
            m = self.drive.monitors.get(mid)
            if m is None:
                raise GraphError(404, "itemNotFound", "No such copy.")
            m["polls"] += 1
            first = m["polls"] == 1
        if first:
            return self.send_json(202, {"operation": "itemCopy", "status": "inProgress", "percentageComplete": 50.0})
        self.send_json(200, {"operation": "itemCopy", "status": "completed", "percentageComplete": 100.0, "resourceId": m["id"]})

    # -- delta

    def delta(self, query):
        drive = self.drive
        token = query.get("token")
        page = query.get("page")
        if page is not None:
            if page not in drive.pending:
                raise GraphError(410, "resyncRequired", "The delta page expired; start again.")
            entries, next_token = drive.pending[page]
        else:
            current = drive.snapshot()
            if token == "latest":
                entries = []
            elif token is None:
                entries = [drive.drive_item(d, with_path=False) for _, (_, _, _, d) in sorted(current.items())]
            else:
                old = drive.snapshots.get(token)
                if old is None:
                    raise GraphError(410, "resyncRequired", "Resync required. Replace any local items with the server's version (including deletes).")
                entries = []
                for key, (pid, name, etag, d) in current.items():
                    if old.get(key, (None,) * 4)[:3] != (pid, name, etag):
                        try:
                            entries.append(drive.drive_item(d, with_path=False))
                        except OSError:
                            pass
                for key, (pid, name, _, _) in old.items():
                    if key not in current:
                        entries.append({"id": key, "name": name, "deleted": {"state": "deleted"}, "parentReference": {"id": pid}})
            next_token = drive.remember(current)
        top = int(query.get("$top") or drive.page_size)
        if len(entries) > top:
            rest = secrets.token_urlsafe(12)
            drive.pending[rest] = (entries[top:], next_token)
            return self.send_json(200, {"value": entries[:top], "@odata.nextLink": f"{self.base}/v1.0/me/drive/root/delta?page={rest}"})
        self.send_json(200, {"value": entries, "@odata.deltaLink": f"{self.base}/v1.0/me/drive/root/delta?token={next_token}"})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--refresh-token", default="fixture-refresh-token")
    p.add_argument("--client-id", default="fixture-client-id")
    p.add_argument("--token-lifetime", type=float, default=3600)
    # The `expires_in` told to clients (default: the true lifetime); a longer one makes a token
    # expire before the client expects it.
    p.add_argument("--stated-lifetime", type=float, default=None)
    p.add_argument("--throttle", type=int, default=0)
    p.add_argument("--retry-after", type=int, default=1)
    p.add_argument("--page-size", type=int, default=50)
    p.add_argument("--quota-total", type=int, default=1024 ** 4)
    a = p.parse_args()
    server = ThreadingHTTPServer((a.host, a.port), Handler)
    server.daemon_threads = True
    server.drive = Drive(a.root, a.page_size)
    server.tokens = {}
    server.refresh_tokens = {a.refresh_token}
    server.client_id = a.client_id
    server.lifetime = a.token_lifetime
    server.stated_lifetime = a.stated_lifetime
    server.throttle = a.throttle
    server.retry_after = a.retry_after
    server.counter_lock = threading.Lock()
    server.quota_total = a.quota_total
    # Tests stop the fixture with SIGTERM: exit through `finally`, so the staging folder goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    finally:
        shutil.rmtree(server.drive.staging, ignore_errors=True)


if __name__ == "__main__":
    main()
