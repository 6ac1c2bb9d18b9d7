#!/usr/bin/env python3
"""A fixture server for the part of Microsoft Graph v1.0's driveItem API that favfs uses,
written from Microsoft's published documentation (driveItem, list children, get content,
upload small files, createUploadSession, update, delete, copy, delta, drive, error responses,
throttling) and the identity platform's OAuth 2 token endpoint. Python 3 standard library only.
It serves one folder of the local disk as the signed-in user's drive, so tests seed and change
files directly, as another client would. The drive (ids, tags, names, snapshots) is in
onedrive_graph_drive.py, the write routes in onedrive_graph_writing.py; this file has the
plumbing, sign-in, reads, delta and the command line.

Graph (bearer token required; items addressed by path, the drive's root is `root`):
  GET    /v1.0/me/drive                                   drive with quota {total, used, remaining}
  GET    /v1.0/me/drive/root  |  /root:/a/b:              driveItem
  GET    /v1.0/me/drive/root/children | /root:/a:/children   ?$top=N (default --page-size), @odata.nextLink
  GET    /v1.0/me/drive/root:/a:/content                  302 to /download/<token>; If-Match: eTag or cTag (412)
  PUT    /v1.0/me/drive/root:/a:/content                  ?@microsoft.graph.conflictBehavior=fail|replace, If-Match (412)
  POST   /v1.0/me/drive/root:/a:/createUploadSession      {"item": {"@microsoft.graph.conflictBehavior"}}, If-Match
  POST   /v1.0/me/drive/root:/a:/children                 {"name", "folder": {}, "@microsoft.graph.conflictBehavior"}
  PATCH  /v1.0/me/drive/root:/a:                          {"name", "parentReference": {"id"} (path is read-only: 400),
                                                           "fileSystemInfo": {"lastModifiedDateTime"}}, If-Match
  DELETE /v1.0/me/drive/root:/a:                          204 (a folder goes with everything in it, as at Graph)
  POST   /v1.0/me/drive/root:/a:/copy                     {"parentReference": {"id"}, "name"} -> 202, Location: /monitor/<id>
  GET    /v1.0/me/drive/root:/a:/thumbnails/0/SIZE/content   302 to /thumbnail/<token>; SIZE small|medium|large or
                                                          cWxH (a box): the image scaled into it as JPEG (Pillow)
  GET    /v1.0/me/drive/root/delta                        ?token=latest | ?token=T -> value, @odata.nextLink | @odata.deltaLink
Pre-authenticated (no Authorization header; one that carries it is refused with 400):
  GET    /download/<token>                                Range honoured (206); 410 once the file's content changed
  PUT    /upload/<session>                                Content-Range: bytes a-b/total; fragments a multiple of
                                                          320 KiB but the last, at most 60 MiB; 202 nextExpectedRanges
  GET    /upload/<session>                                the session's nextExpectedRanges (to resume)
  DELETE /upload/<session>                                cancels the session
  GET    /thumbnail/<token>                               a thumbnail's JPEG
  GET    /monitor/<id>                                    {"status": "inProgress"} once, then "completed" with resourceId
OAuth (the sign-in routes, the code and device code grants: onedrive_graph_signin.py):
  POST   /common/oauth2/v2.0/token                        grant_type=refresh_token&refresh_token&client_id&scope
  GET    /common/oauth2/v2.0/authorize, POST /common/oauth2/v2.0/devicecode
Test control (no authentication):
  POST   /_control/throttle?count=N&retry_after=S         the next N Graph requests get 429 with Retry-After: S
  POST   /_control/resync                                 every delta token given so far answers 410 resyncRequired
  POST   /_control/fail_fragments?count=N                 the next N upload-session fragments are lost (500)
  POST   /_control/device?outcome=O&pending=N             how new device codes end (approve, decline, expire)

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
       [--deny-authorization] [--device-interval S] [--device-pending N] [--device-slow-down N]
       [--device-outcome approve|decline|expire]
Every request is logged to stderr, one line each, after the time (1764213000.123 "PUT /upload/… HTTP/1.1" 202 -).
"""
import argparse
import io
import json
import os
import secrets
import shutil
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from onedrive_graph_drive import Drive, GraphError, iso
from onedrive_graph_signin import SignInRoutes

try:
    from PIL import Image  # python3-pil: without it a thumbnail is 404 itemNotFound (none made)
except ImportError:
    Image = None
from onedrive_graph_writing import WritingRoutes


class Handler(SignInRoutes, WritingRoutes, BaseHTTPRequestHandler):
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
            if raw == "/common/oauth2/v2.0/authorize" and method == "GET":
                return self.authorize(query)
            if raw == "/common/oauth2/v2.0/devicecode" and method == "POST":
                return self.device_code()
            if raw.startswith("/_control/"):
                return self.control(raw[len("/_control/"):], query)
            if raw.startswith("/download/") and method == "GET":
                return self.download(raw[len("/download/"):])
            if raw.startswith("/upload/"):
                return self.fragment(method, raw[len("/upload/"):])
            if raw.startswith("/monitor/") and method == "GET":
                return self.monitor(raw[len("/monitor/"):])
            if raw.startswith("/thumbnail/") and method == "GET":
                return self.thumbnail_bytes(raw[len("/thumbnail/"):])
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
        if method == "GET" and action.startswith("thumbnails/0/") and action.endswith("/content"):
            return self.thumbnail(path, action[len("thumbnails/0/"):-len("/content")])
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
        grants = ("refresh_token", "authorization_code", "urn:ietf:params:oauth:grant-type:device_code")
        if form.get("grant_type") not in grants:
            return self.send_json(400, {"error": "unsupported_grant_type", "error_description": f"AADSTS70003: grant_type must be one of {', '.join(grants)}."})
        if form.get("client_id") != self.server.client_id:
            return self.send_json(400, {"error": "unauthorized_client",
                                        "error_description": f"AADSTS700016: Application with identifier '{form.get('client_id')}' was not found in the directory."})
        if form.get("grant_type") != "refresh_token":
            return self.grant(form)
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
        elif what == "fail_fragments":
            with self.server.counter_lock:
                self.server.fail_fragments = int(query.get("count", "1"))
        elif what == "device":
            self.device_control(query)
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

    BOXES = {"small": (96, 96), "medium": (176, 176), "large": (800, 800)}

    def thumbnail(self, path, size):
        disk = self.drive.existing(path)
        if os.path.isdir(disk) or Image is None:
            raise GraphError(404, "itemNotFound", "The item has no thumbnail.")
        box = self.BOXES.get(size)
        if box is None and size.startswith("c") and "x" in size:
            w, _, h = size[1:].partition("x")
            box = (int(w), int(h))
        if box is None:
            raise GraphError(400, "invalidRequest", f"Unknown thumbnail size {size}")
        try:
            with Image.open(disk) as image:
                image.thumbnail(box)
                out = io.BytesIO()
                image.convert("RGB").save(out, "JPEG")
        except Exception:
            raise GraphError(404, "itemNotFound", "The item has no thumbnail.")
        token = secrets.token_urlsafe(16)
        self.server.thumbnails[token] = out.getvalue()
        self.send(302, b"", {"Location": f"{self.base}/thumbnail/{token}"})

    def thumbnail_bytes(self, token):
        self.pre_authenticated()
        data = self.server.thumbnails.pop(token, None)
        if data is None:
            raise GraphError(404, "itemNotFound", "No such thumbnail URL.")
        self.send(200, data, {}, "image/jpeg")

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
    p.add_argument("--deny-authorization", action="store_true")
    p.add_argument("--device-interval", type=int, default=1)
    p.add_argument("--device-pending", type=int, default=2)
    p.add_argument("--device-slow-down", type=int, default=0)
    p.add_argument("--device-outcome", choices=["approve", "decline", "expire"], default="approve")
    a = p.parse_args()
    server = ThreadingHTTPServer((a.host, a.port), Handler)
    server.daemon_threads = True
    server.drive = Drive(a.root, a.page_size)
    server.tokens = {}
    server.refresh_tokens = {a.refresh_token}
    server.thumbnails = {}  # token -> JPEG bytes, served once
    server.client_id = a.client_id
    server.lifetime = a.token_lifetime
    server.stated_lifetime = a.stated_lifetime
    server.throttle = a.throttle
    server.fail_fragments = 0
    server.retry_after = a.retry_after
    server.counter_lock = threading.Lock()
    server.quota_total = a.quota_total
    server.codes = {}
    server.devices = {}
    server.deny_authorization = a.deny_authorization
    server.device_interval = a.device_interval
    server.device_pending = a.device_pending
    server.device_slow_down = a.device_slow_down
    server.device_outcome = a.device_outcome
    # Tests stop the fixture with SIGTERM: exit through `finally`, so the staging folder goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    finally:
        shutil.rmtree(server.drive.staging, ignore_errors=True)


if __name__ == "__main__":
    main()
