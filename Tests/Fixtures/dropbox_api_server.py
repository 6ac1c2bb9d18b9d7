#!/usr/bin/env python3
"""A fixture server for the part of Dropbox's HTTP API v2 that favfs uses, written from the
published documentation and the API spec (dropbox-api-spec: files.stone, users.stone,
auth.stone). Python 3 standard library only. It serves one folder of the local disk, so tests
seed and inspect files directly.

One port on 127.0.0.1 serves what Dropbox splits over three hosts:

  RPC (JSON body in, JSON out):
    POST /2/files/list_folder            {"path": "" | "/a", "limit": N?} -> entries, cursor, has_more
    POST /2/files/list_folder/continue   {"cursor": "..."}
    POST /2/files/get_metadata           {"path": "/a"}
    POST /2/files/create_folder_v2       {"path": "/a", "autorename": false}
    POST /2/files/delete_v2              {"path": "/a"}   (removes a whole tree, as Dropbox does)
    POST /2/files/move_v2, copy_v2       {"from_path", "to_path", "autorename": false}
    POST /2/users/get_space_usage        null
  content (argument in the Dropbox-API-Arg header, JSON with non-ASCII escaped):
    POST /2/files/download               {"path": "/a" | "rev:..."}, Range honoured (206)
    POST /2/files/get_thumbnail_v2       {"resource": {".tag": "path", "path"}, "format", "size": "w128h128", "mode"}
                                         -> the image scaled into the box (Pillow), metadata in Dropbox-API-Result
    POST /2/files/upload                 {"path", "mode": add|overwrite|{update: rev}, "autorename", "strict_conflict"}
    POST /2/files/upload_session/start, append_v2, finish   (offsets checked)
  changes:
    POST /2/files/list_folder/get_latest_cursor  {"path", "recursive": true, ...} -> {"cursor"}
    POST /2/files/list_folder/longpoll   {"cursor", "timeout": 30..480} -> {"changes", "backoff"?}; no
                                         Authorization (Dropbox serves it on notify.dropboxapi.com)
    list_folder/continue on such a cursor: the entries changed since it, `deleted` ones included,
                                         --page-size at a time
  OAuth:
    POST /oauth2/token                   grant_type=refresh_token&refresh_token=...&client_id=...
                                         grant_type=authorization_code&code=...&code_verifier=...&client_id=...[&redirect_uri=...]
    GET  /oauth2/authorize               ?client_id&response_type=code&code_challenge&code_challenge_method=S256
                                         [&redirect_uri][&state]: approves at once (302 to redirect_uri with
                                         code and state, or a page showing the code in <code id="code">)
  test controls (not Dropbox's):
    POST /fixture/reset-cursors          every change cursor given so far is `reset` from now on
    POST /fixture/corrupt?uploads=N&downloads=M   one byte of each of the next N uploaded bodies
                                         (before the content_hash check) and M download bodies
                                         is flipped, as a faulty network path would

Changes: a change cursor holds a snapshot of the tree under its path (path, type, size, mtime);
a long poll compares the tree with it every 0.2 s, so changes a test makes on disk are seen.
The authorization page denies (error=access_denied) with --deny-authorization.

Versions: `rev` is derived from the file's state on disk (size, mtime_ns, inode), so a change
made behind the server's back is a new rev. The fixture keeps no history: a `rev:` that is no
longer the file's current one answers `path/not_found` (real Dropbox still serves old revisions).
`content_hash` is Dropbox's documented hash: SHA-256 over the SHA-256 of each 4 MiB block.

Paths are case-insensitive and case-preserving. Errors are 409 with `error_summary` and the
`error` union; authentication failures 401; `--throttle N` answers the next N API requests with
429 and `Retry-After`. Listings page at --page-size entries when a request gives no limit (real
Dropbox chooses its own page size too).

Usage: dropbox_api_server.py ROOT --port PORT [--refresh-token T] [--client-id ID] [--deny-authorization]
       [--longpoll-backoff SECONDS] [--longpoll-throttle N] [--always-reset] [--token-lifetime SECONDS] [--stated-lifetime SECONDS] [--throttle N] [--retry-after SECONDS] [--page-size N]
Environment: DROPBOX_FIXTURE_TOKEN_LIFETIME, DROPBOX_FIXTURE_THROTTLE (defaults for the flags).
Every request is logged to stderr, one line each.
"""
import argparse
import io
import base64
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from PIL import Image  # python3-pil: thumbnails answer unsupported_image without it
except ImportError:
    Image = None

BLOCK = 4 * 1024 * 1024
MAX_UPLOAD = 150 * 1024 * 1024


class ApiError(Exception):
    """A 409 route error: `tags` make the summary, `error` is the union as JSON."""

    def __init__(self, error, status=409):
        super().__init__(error)
        self.error = error
        self.status = status


def summary(error):
    """`path/not_found/..` from {".tag": "path", "path": {".tag": "not_found"}}."""
    parts = []
    node = error
    while isinstance(node, dict) and ".tag" in node:
        tag = node[".tag"]
        parts.append(tag)
        node = node.get(tag) if isinstance(node.get(tag), dict) else (node.get("reason") if tag == "path" and "reason" in node else None)
    return "/".join(parts) + "/.."


def lookup(tag, outer="path"):
    return ApiError({".tag": outer, outer: {".tag": tag}})


def write_error(tag, conflict=None, outer="path"):
    inner = {".tag": tag}
    if conflict:
        inner["conflict"] = {".tag": conflict}
    return ApiError({".tag": outer, outer: inner})


def upload_error(tag, conflict=None):
    reason = {".tag": tag}
    if conflict:
        reason["conflict"] = {".tag": conflict}
    return ApiError({".tag": "path", "reason": reason, "upload_session_id": "none"})


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t)))


def disallowed(name):
    """Names Dropbox will not save (WriteError.disallowed_name): backslash, DEL, a trailing space."""
    return "\\" in name or "\x7f" in name or name.endswith(" ") or name in (".", "..")


class Store:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.staging = tempfile.mkdtemp(prefix=".dropbox-staging-", dir=os.path.dirname(self.root))
        self.lock = threading.RLock()
        self.revs = {}  # rev -> disk path, for `rev:` reads
        self.hashes = {}  # (ino, size, mtime_ns) -> content_hash
        self.sessions = {}  # session id -> {"file", "offset", "closed"}

    # -- paths

    def components(self, path):
        if path in ("", "/"):
            return []
        if not path.startswith("/") or path.endswith("/") or "//" in path:
            raise ApiError({".tag": "path", "path": {".tag": "malformed_path"}})
        return path[1:].split("/")

    def resolve(self, path):
        """(disk path or None, display path, disk path of the deepest existing folder, missing rest)."""
        disk = self.root
        display = ""
        comps = self.components(path)
        for i, comp in enumerate(comps):
            if not os.path.isdir(disk):
                return None, None, None, comps[i:], True
            try:
                names = os.listdir(disk)
            except OSError:
                names = []
            match = comp if comp in names else next((n for n in names if n.lower() == comp.lower()), None)
            if match is None:
                return None, display, disk, comps[i:], False
            disk = os.path.join(disk, match)
            display += "/" + match
        return disk, display, disk, [], False

    def existing(self, path, outer="path"):
        disk, display, _, _, file_ancestor = self.resolve(path)
        if disk is None:
            raise lookup("not_folder" if file_ancestor else "not_found", outer)
        return disk, display

    # -- change snapshots

    def snapshot(self, path):
        """{display path: (type, size, mtime_ns)} of everything below `path` (not itself)."""
        disk, display = self.existing(path)
        out = {}
        for dirpath, dirs, files in os.walk(disk):
            rel = os.path.relpath(dirpath, disk)
            prefix = display if rel == "." else display + "/" + rel.replace(os.sep, "/")
            for name in dirs + files:
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:
                    continue
                kind = "folder" if name in dirs else "file"
                out[prefix + "/" + name] = (kind, 0 if kind == "folder" else st.st_size, 0 if kind == "folder" else st.st_mtime_ns)
        return out

    # -- metadata

    def rev(self, st):
        return hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode()).hexdigest()[:16]

    @staticmethod
    def content_hash_of(disk):
        digest = hashlib.sha256()
        with open(disk, "rb") as f:
            while True:
                block = f.read(BLOCK)
                if not block:
                    break
                digest.update(hashlib.sha256(block).digest())
        return digest.hexdigest()

    def content_hash(self, disk, st):
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key in self.hashes:
            return self.hashes[key]
        digest = hashlib.sha256()
        with open(disk, "rb") as f:
            while True:
                block = f.read(BLOCK)
                if not block:
                    break
                digest.update(hashlib.sha256(block).digest())
        value = digest.hexdigest()
        if len(self.hashes) > 100_000:
            self.hashes.clear()
        self.hashes[key] = value
        return value

    def metadata(self, disk, display):
        st = os.stat(disk)
        name = display.rsplit("/", 1)[-1]
        base = {"name": name, "path_lower": display.lower(), "path_display": display, "id": f"id:{st.st_ino:x}"}
        if os.path.isdir(disk):
            return {".tag": "folder", **base}
        rev = self.rev(st)
        self.revs[rev] = disk
        return {".tag": "file", **base, "client_modified": iso(st.st_mtime), "server_modified": iso(st.st_mtime),
                "rev": rev, "size": st.st_size, "is_downloadable": True, "content_hash": self.content_hash(disk, st)}

    # -- writes

    def target(self, path, outer="path"):
        """For a write: (disk path, display path, exists) with parents made as Dropbox makes them."""
        comps = self.components(path)
        if not comps:
            raise ApiError({".tag": outer, outer: {".tag": "malformed_path"}})
        if any(disallowed(c) for c in comps):
            raise write_error("disallowed_name", outer=outer)
        disk, display, deepest, missing, file_ancestor = self.resolve(path)
        if file_ancestor:
            raise write_error("conflict", "file_ancestor", outer)
        if disk is not None:
            return disk, display, True
        if not os.path.isdir(deepest):
            raise write_error("conflict", "file_ancestor", outer)
        return os.path.join(deepest, *missing), display + "/" + "/".join(missing), False

    def commit(self, staged, commit):
        path = commit.get("path", "")
        mode = commit.get("mode", {".tag": "add"})
        if isinstance(mode, str):
            mode = {".tag": mode}
        strict = commit.get("strict_conflict", False)
        with self.lock:
            try:
                disk, display, exists = self.target(path)
            except ApiError as e:
                raise upload_error(e.error["path"][".tag"], e.error["path"].get("conflict", {}).get(".tag"))
            if exists and os.path.isdir(disk):
                raise upload_error("conflict", "folder")
            tag = mode.get(".tag")
            if tag == "add" and exists:
                if strict or self.file_hash(staged) != self.file_hash(disk):
                    raise upload_error("conflict", "file")
                os.unlink(staged)
                return self.metadata(disk, display)
            if tag == "update":
                if exists and self.rev(os.stat(disk)) != mode.get("update"):
                    raise upload_error("conflict", "file")
                if not exists and strict:
                    raise upload_error("conflict", "file")
            elif tag not in ("add", "overwrite"):
                raise BadRequest(f"unknown write mode {tag!r}")
            os.makedirs(os.path.dirname(disk), exist_ok=True)
            os.rename(staged, disk)
            return self.metadata(disk, display)

    @staticmethod
    def file_hash(disk):
        with open(disk, "rb") as f:
            return hashlib.sha256(f.read()).digest()


class BadRequest(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "dropbox-fixture"

    # -- plumbing

    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))

    def send(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body or content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, obj, headers=None):
        self.send(status, json.dumps(obj).encode(), headers)

    def read_body_to(self, out):
        """Copies the request body (Content-Length or chunked) into `out`; returns its length."""
        total = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return total
                remaining = size
                while remaining:
                    chunk = self.rfile.read(min(remaining, 1 << 20))
                    if not chunk:
                        raise BadRequest("body ended early")
                    out.write(chunk)
                    remaining -= len(chunk)
                total += size
                self.rfile.readline()
        remaining = int(self.headers.get("Content-Length", "0"))
        while remaining:
            chunk = self.rfile.read(min(remaining, 1 << 20))
            if not chunk:
                raise BadRequest("body ended early")
            out.write(chunk)
            remaining -= len(chunk)
            total += len(chunk)
        return total

    def body(self):
        class Sink:
            def __init__(self):
                self.parts = []

            def write(self, b):
                self.parts.append(b)
        s = Sink()
        self.read_body_to(s)
        return b"".join(s.parts)

    def api_arg(self):
        raw = self.headers.get("Dropbox-API-Arg")
        if raw is None:
            raise BadRequest("Missing Dropbox-API-Arg header")
        try:
            raw.encode("ascii")
        except UnicodeEncodeError:
            raise BadRequest("Dropbox-API-Arg must be ASCII: escape other characters as \\uXXXX")
        return json.loads(raw)

    @staticmethod
    def header_json(obj):
        return json.dumps(obj, ensure_ascii=True).replace("\x7f", "\\u007f")

    # -- authentication and throttling

    def authenticate(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        expiry = self.server.tokens.get(token) if token else None
        if expiry is None:
            tag = "invalid_access_token"
        elif time.time() >= expiry:
            tag = "expired_access_token"
        else:
            return True
        self.send_json(401, {"error_summary": tag + "/..", "error": {".tag": tag}})
        return False

    def throttled(self):
        with self.server.counter_lock:
            if self.server.throttle <= 0:
                return False
            self.server.throttle -= 1
        after = self.server.retry_after
        self.send_json(429, {"error_summary": "too_many_requests/..",
                             "error": {"reason": {".tag": "too_many_requests"}, "retry_after": after}},
                       {"Retry-After": str(after)})
        return True

    # -- dispatch

    def do_POST(self):
        route = urllib.parse.urlsplit(self.path).path
        try:
            if route == "/oauth2/token":
                return self.token()
            if route == "/2/files/list_folder/longpoll":
                return self.longpoll()
            if route == "/fixture/corrupt":
                self.body()
                q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                with self.server.counter_lock:
                    self.server.corrupt_uploads = int(q.get("uploads", ["0"])[0])
                    self.server.corrupt_downloads = int(q.get("downloads", ["0"])[0])
                return self.send_json(200, {})
            if route == "/fixture/reset-cursors":
                self.body()
                with self.server.counter_lock:
                    self.server.generation += 1
                return self.send_json(200, {"generation": self.server.generation})
            handler = ROUTES.get(route)
            if handler is None:
                self.body()
                return self.send(404, b"Unknown API function: " + route.encode(), content_type="text/plain")
            if not self.authenticate():
                self.drain()
                return
            if self.throttled():
                self.drain()
                return
            handler(self)
        except ApiError as e:
            self.send_json(e.status, {"error_summary": summary(e.error), "error": e.error})
        except (BadRequest, ValueError, KeyError, TypeError) as e:
            self.send(400, f"Error in call to API function \"{route}\": {e}".encode(), content_type="text/plain")

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        if parts.path == "/oauth2/authorize":
            return self.authorize(urllib.parse.parse_qs(parts.query))
        self.send(404, b"not found", content_type="text/plain")

    def drain(self):
        try:
            self.read_body_to(open(os.devnull, "wb"))
        except Exception:
            self.close_connection = True

    def rpc_arg(self):
        raw = self.body()
        return json.loads(raw) if raw.strip() else None

    # -- OAuth

    def token(self):
        form = urllib.parse.parse_qs(self.body().decode())
        grant = form.get("grant_type", [""])[0]
        if grant not in ("refresh_token", "authorization_code"):
            return self.send_json(400, {"error": "unsupported_grant_type", "error_description": f"grant_type {grant!r}"})
        if self.server.client_id and form.get("client_id", [""])[0] != self.server.client_id:
            return self.send_json(400, {"error": "invalid_client", "error_description": "Invalid client_id or client_secret"})
        extra = {}
        if grant == "authorization_code":
            problem = self.redeem(form)
            if problem:
                return self.send_json(400, {"error": "invalid_grant", "error_description": problem})
            refresh = "fixture-issued-" + secrets.token_urlsafe(16)
            self.server.refresh_tokens.add(refresh)
            extra = {"refresh_token": refresh, "scope": "files.content.read files.content.write", "uid": "12345",
                     "account_id": "dbid:fixture"}
        elif form.get("refresh_token", [""])[0] not in self.server.refresh_tokens:
            return self.send_json(400, {"error": "invalid_grant", "error_description": "refresh token is invalid or revoked"})
        token = "sl." + secrets.token_urlsafe(24)
        self.server.tokens[token] = time.time() + self.server.lifetime
        stated = self.server.stated_lifetime if self.server.stated_lifetime is not None else self.server.lifetime
        self.send_json(200, {"access_token": token, "token_type": "bearer", "expires_in": int(stated), **extra})

    def redeem(self, form):
        """Checks an authorization code grant (once per code); the problem, or None."""
        code = form.get("code", [""])[0]
        with self.server.counter_lock:
            grant = self.server.codes.pop(code, None)
        if grant is None or time.time() > grant["expires"]:
            return "code doesn't exist or has expired"
        verifier = form.get("code_verifier", [""])[0]
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if not verifier or digest != grant["challenge"]:
            return "invalid code verifier"
        if form.get("redirect_uri", [None])[0] != grant["redirect_uri"]:
            return "redirect_uri mismatch"
        return None

    def authorize(self, query):
        """The consent page, approving (or, with --deny-authorization, denying) at once."""
        one = lambda k: query.get(k, [None])[0]
        redirect, state = one("redirect_uri"), one("state")
        problem = None
        if one("response_type") != "code":
            problem = "response_type must be code"
        elif self.server.client_id and one("client_id") != self.server.client_id:
            problem = "invalid client_id"
        elif not one("code_challenge") or one("code_challenge_method") != "S256":
            problem = "this app uses PKCE: code_challenge and code_challenge_method=S256"
        elif redirect and not redirect.startswith("http://127.0.0.1:") and not redirect.startswith("http://localhost:"):
            problem = "redirect_uri is not registered"
        if problem:
            return self.send(400, f"<p>Invalid request: {problem}</p>".encode(), content_type="text/html")
        back = {"state": state} if state is not None else {}
        if self.server.deny:
            if redirect:
                q = urllib.parse.urlencode({"error": "access_denied", "error_description": "The user chose not to give your app access", **back})
                return self.send(302, b"", {"Location": redirect + ("&" if "?" in redirect else "?") + q}, content_type="text/plain")
            return self.send(200, b"<p>You chose not to give the app access.</p>", content_type="text/html")
        code = secrets.token_urlsafe(24)
        with self.server.counter_lock:
            self.server.codes[code] = {"challenge": one("code_challenge"), "redirect_uri": redirect, "expires": time.time() + 600}
        if redirect:
            q = urllib.parse.urlencode({"code": code, **back})
            return self.send(302, b"", {"Location": redirect + ("&" if "?" in redirect else "?") + q}, content_type="text/plain")
        page = f"<p>Enter this code into the app:</p><code id=\"code\">{code}</code>"
        self.send(200, page.encode(), content_type="text/html")

    # -- RPC routes

    def list_folder(self):
        arg = self.rpc_arg()
        limit = arg.get("limit") or self.server.page_size
        store = self.server.store
        with store.lock:
            disk, display = store.existing(arg["path"])
            if not os.path.isdir(disk):
                raise lookup("not_folder")
        cursor = base64.urlsafe_b64encode(json.dumps({"p": display, "o": 0, "l": limit}).encode()).decode()
        self.list_page(cursor)

    def list_folder_continue(self):
        cursor = self.rpc_arg()["cursor"]
        state = self.change_cursor(cursor)
        if state is not None:
            return self.changes_page(state)
        self.list_page(cursor)

    # -- change cursors

    def make_change_cursor(self, path):
        store = self.server.store
        with store.lock:
            _, display = store.existing(path)
            snap = store.snapshot(path)
        with self.server.counter_lock:
            self.server.next_snapshot += 1
            sid = self.server.next_snapshot
            self.server.snapshots[sid] = snap
            generation = self.server.generation
        return base64.urlsafe_b64encode(json.dumps({"c": display, "s": sid, "g": generation}).encode()).decode()

    def change_cursor(self, cursor):
        """The state of a change cursor (None for a listing cursor); `reset` once reset."""
        try:
            state = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        except Exception:
            raise BadRequest("invalid cursor")
        if "s" not in state:
            return None
        if state["g"] != self.server.generation or state["s"] not in self.server.snapshots:
            raise ApiError({".tag": "reset"})
        return state

    def get_latest_cursor(self):
        arg = self.rpc_arg()
        if not arg.get("recursive"):
            raise BadRequest("this fixture keeps change cursors for recursive listings only")
        store = self.server.store
        with store.lock:
            disk, _ = store.existing(arg["path"])
            if not os.path.isdir(disk):
                raise lookup("not_folder")
        self.send_json(200, {"cursor": self.make_change_cursor(arg["path"])})

    def changes_page(self, state):
        """The changes from the cursor's snapshot to now, --page-size at a time: the first page
        fixes "now" (snapshot `n`); the cursor of the last page is a change cursor on it."""
        store = self.server.store
        before = self.server.snapshots[state["s"]]
        with store.lock:
            if "n" in state:
                now_id = state["n"]
            else:
                with self.server.counter_lock:
                    self.server.next_snapshot += 1
                    now_id = self.server.next_snapshot
                    self.server.snapshots[now_id] = store.snapshot(state["c"])
            now = self.server.snapshots[now_id]
            changed = [("deleted", p) for p in sorted(set(before) - set(now))]
            changed += [("present", p) for p in sorted(now) if before.get(p) != now[p]]
            offset = state.get("o", 0)
            page = changed[offset:offset + self.server.page_size]
            entries = []
            for kind, path in page:
                disk, display = store.resolve(path)[:2] if kind == "present" else (None, None)
                if disk is not None:
                    entries.append(store.metadata(disk, display))
                else:
                    name = path.rsplit("/", 1)[-1]
                    entries.append({".tag": "deleted", "name": name, "path_lower": path.lower(), "path_display": path})
        offset += len(page)
        more = offset < len(changed)
        nxt = {"c": state["c"], "s": state["s"], "n": now_id, "o": offset, "g": state["g"]} if more else {"c": state["c"], "s": now_id, "g": state["g"]}
        cursor = base64.urlsafe_b64encode(json.dumps(nxt).encode()).decode()
        self.send_json(200, {"entries": entries, "cursor": cursor, "has_more": more})

    def longpoll(self):
        try:
            arg = json.loads(self.body() or b"null")
            with self.server.counter_lock:
                throttled = self.server.longpoll_throttle > 0
                self.server.longpoll_throttle -= 1 if throttled else 0
            if throttled:
                after = self.server.retry_after
                return self.send_json(429, {"error_summary": "too_many_requests/..",
                                            "error": {"reason": {".tag": "too_many_requests"}, "retry_after": after}},
                                      {"Retry-After": str(after)})
            timeout = arg.get("timeout", 30)
            if not isinstance(timeout, int) or not 30 <= timeout <= 480:
                raise BadRequest("timeout: must be between 30 and 480")
            state = self.change_cursor(arg["cursor"])
            if state is None:
                raise BadRequest("not a cursor of get_latest_cursor")
            if self.server.always_reset:
                raise ApiError({".tag": "reset"})
            before = self.server.snapshots[state["s"]]
            deadline = time.time() + timeout
            changes = False
            while time.time() < deadline:
                if state["g"] != self.server.generation:
                    raise ApiError({".tag": "reset"})
                with self.server.store.lock:
                    try:
                        now = self.server.store.snapshot(state["c"])
                    except ApiError:
                        now = None  # the folder itself went: a change
                if now != before:
                    changes = True
                    break
                time.sleep(0.2)
            answer = {"changes": changes}
            if self.server.longpoll_backoff:
                answer["backoff"] = self.server.longpoll_backoff
            self.send_json(200, answer)
        except ApiError as e:
            self.send_json(e.status, {"error_summary": summary(e.error), "error": e.error})
        except (BadRequest, ValueError, KeyError, TypeError, AttributeError) as e:
            self.send(400, f"Error in call to API function \"files/list_folder/longpoll\": {e}".encode(), content_type="text/plain")

    def list_page(self, cursor):
        try:
            state = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        except Exception:
            raise BadRequest("invalid cursor")
        store = self.server.store
        with store.lock:
            disk, display = store.existing(state["p"])
            names = sorted(os.listdir(disk))
            page = names[state["o"]:state["o"] + state["l"]]
            entries = []
            for name in page:
                try:
                    entries.append(store.metadata(os.path.join(disk, name), display + "/" + name))
                except FileNotFoundError:
                    continue
        offset = state["o"] + len(page)
        nxt = base64.urlsafe_b64encode(json.dumps({"p": state["p"], "o": offset, "l": state["l"]}).encode()).decode()
        self.send_json(200, {"entries": entries, "cursor": nxt, "has_more": offset < len(names)})

    def get_metadata(self):
        arg = self.rpc_arg()
        if arg["path"] in ("", "/"):
            raise BadRequest("The root folder is unsupported.")
        store = self.server.store
        with store.lock:
            self.send_json(200, store.metadata(*store.existing(arg["path"])))

    def create_folder(self):
        arg = self.rpc_arg()
        store = self.server.store
        with store.lock:
            disk, display, exists = store.target(arg["path"])
            if exists:
                raise write_error("conflict", "folder" if os.path.isdir(disk) else "file")
            os.makedirs(disk)
            self.send_json(200, {"metadata": store.metadata(disk, display)})

    def delete(self):
        arg = self.rpc_arg()
        store = self.server.store
        if not store.components(arg["path"]):
            raise ApiError({".tag": "path_lookup", "path_lookup": {".tag": "malformed_path"}})
        with store.lock:
            disk, display = store.existing(arg["path"], "path_lookup")
            meta = store.metadata(disk, display)
            if os.path.isdir(disk):
                shutil.rmtree(disk)
            else:
                os.unlink(disk)
        self.send_json(200, {"metadata": meta})

    def relocate(self, copy):
        arg = self.rpc_arg()
        store = self.server.store
        with store.lock:
            src, _ = store.existing(arg["from_path"], "from_lookup")
            if arg["to_path"].lower() == arg["from_path"].lower() and not copy:
                # A change of case only: Dropbox renames in place.
                new = os.path.join(os.path.dirname(src), arg["to_path"].rsplit("/", 1)[-1])
                os.rename(src, new)
                return self.send_json(200, {"metadata": store.metadata(new, arg["to_path"])})
            if os.path.isdir(src) and (arg["to_path"].lower() + "/").startswith(arg["from_path"].lower() + "/"):
                raise ApiError({".tag": "cant_move_folder_into_itself"})
            dst, display, exists = store.target(arg["to_path"], "to")
            if exists:
                raise write_error("conflict", "folder" if os.path.isdir(dst) else "file", "to")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if copy:
                if os.path.isdir(src):
                    shutil.copytree(src, dst)
                else:
                    shutil.copyfile(src, dst)
            else:
                os.rename(src, dst)
            self.send_json(200, {"metadata": store.metadata(dst, display)})

    def move(self):
        self.relocate(copy=False)

    def copy(self):
        self.relocate(copy=True)

    def space_usage(self):
        self.rpc_arg()
        used = 0
        for dirpath, _, files in os.walk(self.server.store.root):
            for f in files:
                try:
                    used += os.lstat(os.path.join(dirpath, f)).st_size
                except OSError:
                    pass
        self.send_json(200, {"used": used, "allocation": {".tag": "individual", "allocated": self.server.allocated}})

    # -- content routes

    def download(self):
        arg = self.api_arg()
        self.body()
        store = self.server.store
        path = arg["path"]
        with store.lock:
            if path.startswith("rev:"):
                disk = store.revs.get(path[4:])
                if disk is None or not os.path.isfile(disk) or store.rev(os.stat(disk)) != path[4:]:
                    raise lookup("not_found")
                display = "/" + os.path.relpath(disk, store.root)
            else:
                disk, display = store.existing(path)
                if os.path.isdir(disk):
                    raise lookup("not_file")
            f = open(disk, "rb")
            meta = store.metadata(disk, display)
        with f:
            size = os.fstat(f.fileno()).st_size
            start, end, status = 0, size, 200
            rng = self.headers.get("Range")
            headers = {"Dropbox-API-Result": self.header_json(meta), "Accept-Ranges": "bytes"}
            if rng and rng.startswith("bytes="):
                first, _, last = rng[6:].partition("-")
                if first == "":
                    start = max(0, size - int(last))
                else:
                    start = int(first)
                    end = min(size, int(last) + 1) if last else size
                if start >= size:
                    headers["Content-Range"] = f"bytes */{size}"
                    return self.send(416, b"", headers, content_type="text/plain")
                status = 206
                headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(end - start))
            self.end_headers()
            f.seek(start)
            remaining = end - start
            corrupt = remaining > 0 and self.take_corruption("corrupt_downloads")
            while remaining:
                chunk = f.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                if corrupt:
                    chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
                    corrupt = False
                self.wfile.write(chunk)
                remaining -= len(chunk)

    THUMBNAIL_EXTENSIONS = {".jpg", ".jpeg", ".png", ".tiff", ".tif", ".gif", ".webp", ".ppm", ".bmp"}

    def thumbnail(self):
        arg = self.api_arg()
        self.body()
        resource = arg.get("resource", {})
        if resource.get(".tag") != "path":
            raise BadRequest("resource must be a path")
        store = self.server.store
        with store.lock:
            disk, display = store.existing(resource["path"])
            if os.path.isdir(disk):
                raise ApiError({".tag": "path", "path": {".tag": "not_file"}})
            meta = store.metadata(disk, display)
        if os.path.splitext(disk)[1].lower() not in self.THUMBNAIL_EXTENSIONS:
            raise ApiError({".tag": "unsupported_extension"})
        size = arg.get("size", "w64h64")
        if isinstance(size, dict):
            size = size.get(".tag", "w64h64")
        w, _, h = size[1:].partition("h")
        fmt = arg.get("format", "jpeg")
        if isinstance(fmt, dict):
            fmt = fmt.get(".tag", "jpeg")
        if Image is None:
            raise ApiError({".tag": "unsupported_image"})
        try:
            with Image.open(disk) as image:
                image.thumbnail((int(w), int(h)))
                out = io.BytesIO()
                image.convert("RGB").save(out, "PNG" if fmt == "png" else "JPEG")
        except Exception:
            raise ApiError({".tag": "unsupported_image"})
        self.send(200, out.getvalue(), {"Dropbox-API-Result": self.header_json(meta)},
                  content_type="image/png" if fmt == "png" else "image/jpeg")

    def staged_body(self, limit=MAX_UPLOAD):
        fd, staged = tempfile.mkstemp(dir=self.server.store.staging)
        with os.fdopen(fd, "wb") as out:
            n = self.read_body_to(out)
        if n > limit:
            os.unlink(staged)
            raise ApiError({".tag": "payload_too_large"})
        return staged, n

    def take_corruption(self, kind):
        with self.server.counter_lock:
            left = getattr(self.server, kind)
            if left > 0:
                setattr(self.server, kind, left - 1)
            return left > 0

    def upload(self):
        arg = self.api_arg()
        staged, _ = self.staged_body()
        try:
            if self.take_corruption("corrupt_uploads") and os.path.getsize(staged) > 0:
                with open(staged, "r+b") as f:
                    first = f.read(1)
                    f.seek(0)
                    f.write(bytes([first[0] ^ 0xFF]))
            # UploadArg.content_hash: the bytes of this call must hash to it, else nothing is written.
            expected = arg.get("content_hash")
            if expected is not None and self.server.store.content_hash_of(staged) != expected:
                raise ApiError({".tag": "content_hash_mismatch"})
            meta = self.server.store.commit(staged, arg)
        finally:
            if os.path.exists(staged):
                os.unlink(staged)
        self.send_json(200, meta)

    def session_start(self):
        arg = self.api_arg() if self.headers.get("Dropbox-API-Arg") else {}
        staged, n = self.staged_body()
        sid = "pid_upload_session:" + secrets.token_urlsafe(24)
        with self.server.store.lock:
            self.server.store.sessions[sid] = {"file": staged, "offset": n, "closed": bool(arg.get("close"))}
        self.send_json(200, {"session_id": sid})

    def session(self, cursor, outer=None):
        store = self.server.store
        s = store.sessions.get(cursor["session_id"])

        def fail(error):
            return ApiError({".tag": "lookup_failed", "lookup_failed": error} if outer else error)
        if s is None:
            raise fail({".tag": "not_found"})
        if s["offset"] != cursor["offset"]:
            raise fail({".tag": "incorrect_offset", "correct_offset": s["offset"]})
        if s["closed"] and outer is None:
            raise fail({".tag": "closed"})
        return s

    def append_staged(self, s):
        staged, n = self.staged_body()
        with open(staged, "rb") as src, open(s["file"], "ab") as dst:
            shutil.copyfileobj(src, dst)
        os.unlink(staged)
        s["offset"] += n

    def session_append(self):
        arg = self.api_arg()
        with self.server.store.lock:
            s = self.session(arg["cursor"])
        self.append_staged(s)
        s["closed"] = bool(arg.get("close"))
        self.send_json(200, None)

    def session_finish(self):
        arg = self.api_arg()
        with self.server.store.lock:
            s = self.session(arg["cursor"], outer="lookup_failed")
        self.append_staged(s)
        try:
            meta = self.server.store.commit(s["file"], arg["commit"])
        finally:
            self.server.store.sessions.pop(arg["cursor"]["session_id"], None)
            if os.path.exists(s["file"]):
                os.unlink(s["file"])
        self.send_json(200, meta)


ROUTES = {
    "/2/files/list_folder": Handler.list_folder,
    "/2/files/list_folder/continue": Handler.list_folder_continue,
    "/2/files/list_folder/get_latest_cursor": Handler.get_latest_cursor,
    "/2/files/get_metadata": Handler.get_metadata,
    "/2/files/create_folder_v2": Handler.create_folder,
    "/2/files/delete_v2": Handler.delete,
    "/2/files/move_v2": Handler.move,
    "/2/files/copy_v2": Handler.copy,
    "/2/users/get_space_usage": Handler.space_usage,
    "/2/files/download": Handler.download,
    "/2/files/get_thumbnail_v2": Handler.thumbnail,
    "/2/files/upload": Handler.upload,
    "/2/files/upload_session/start": Handler.session_start,
    "/2/files/upload_session/append_v2": Handler.session_append,
    "/2/files/upload_session/finish": Handler.session_finish,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--refresh-token", default="fixture-refresh-token")
    p.add_argument("--client-id", default="")
    p.add_argument("--token-lifetime", type=float, default=float(os.environ.get("DROPBOX_FIXTURE_TOKEN_LIFETIME", "14400")))
    # The `expires_in` told to clients (default: the true lifetime); a longer one lets a test
    # make a token expire before the client expects it.
    p.add_argument("--stated-lifetime", type=float, default=None)
    p.add_argument("--throttle", type=int, default=int(os.environ.get("DROPBOX_FIXTURE_THROTTLE", "0")))
    p.add_argument("--retry-after", type=int, default=1)
    p.add_argument("--page-size", type=int, default=500)
    p.add_argument("--allocated", type=int, default=2 * 1024 ** 4)
    p.add_argument("--deny-authorization", action="store_true")
    p.add_argument("--longpoll-backoff", type=int, default=0)
    p.add_argument("--longpoll-throttle", type=int, default=0)
    p.add_argument("--always-reset", action="store_true")
    a = p.parse_args()
    server = ThreadingHTTPServer((a.host, a.port), Handler)
    server.daemon_threads = True
    server.store = Store(a.root)
    server.tokens = {}
    server.refresh_token = a.refresh_token
    server.refresh_tokens = {a.refresh_token}  # and those issued by the authorization code grant
    server.codes = {}  # authorization code -> {"challenge", "redirect_uri", "expires"}
    server.deny = a.deny_authorization
    server.longpoll_backoff = a.longpoll_backoff
    server.always_reset = a.always_reset  # every long poll answers `reset` (a cursor Dropbox keeps refusing)
    server.longpoll_throttle = a.longpoll_throttle  # the first N long polls answer 429 + Retry-After
    server.snapshots = {}  # change cursor's snapshot id -> snapshot
    server.next_snapshot = 0
    server.generation = 0  # bumped by /fixture/reset-cursors
    server.corrupt_uploads = 0  # set by /fixture/corrupt
    server.corrupt_downloads = 0
    server.client_id = a.client_id
    server.lifetime = a.token_lifetime
    server.stated_lifetime = a.stated_lifetime
    server.throttle = a.throttle
    server.retry_after = a.retry_after
    server.counter_lock = threading.Lock()
    server.page_size = a.page_size
    server.allocated = a.allocated
    # Tests stop the fixture with SIGTERM: exit through `finally`, so the staging folder goes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    finally:
        shutil.rmtree(server.store.staging, ignore_errors=True)


if __name__ == "__main__":
    main()
