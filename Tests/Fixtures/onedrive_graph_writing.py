#!/usr/bin/env python3
"""The write routes of the Microsoft Graph fixture (`onedrive_graph_server.py`): uploads (one PUT
or an upload session of 320 KiB fragments), folders, deletes, moves and times (PATCH), and copies
with their monitor. A mixin of its request handler. Python 3 standard library only."""
import os
import secrets
import shutil
import tempfile
import time
import urllib.parse

from onedrive_graph_drive import FRAGMENT_UNIT, MAX_FRAGMENT, GraphError, iso, name_problem, not_found, parse_iso


class WritingRoutes:
    """PUT content, createUploadSession and its fragments, POST children, DELETE, PATCH, copy."""


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
        if method == "GET":
            # The session's state, to resume after a fragment that failed.
            return self.send_json(200, {"expirationDateTime": iso(time.time() + 3600), "nextExpectedRanges": [f"{s['received']}-"]})
        if method != "PUT":
            raise GraphError(405, "notAllowed", "Upload sessions take GET, PUT and DELETE.")
        with self.server.counter_lock:
            failing = self.server.fail_fragments > 0
            self.server.fail_fragments -= 1 if failing else 0
        if failing:
            self.body_bytes()
            raise GraphError(500, "generalException", "The fragment was lost (a test asked for it).")
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
        """Disk path for `name` in the folder `ref` names ({"id": ...}; itemReference's `path` is
        read-only in Graph's documentation, so a `path` here is refused)."""
        if ref is None:
            folder = os.path.dirname(source)
        elif "id" in ref:
            if ref["id"] == "ROOT":
                folder = self.drive.root
            else:
                folder = self.drive.snapshot().get(ref["id"], (None, None, None, None))[3]
            if folder is None:
                raise not_found(ref["id"])
        elif "path" in ref:
            raise GraphError(400, "invalidRequest", "parentReference.path is read-only: name the parent by its id.")
        else:
            raise GraphError(400, "invalidRequest", "parentReference needs the parent's id.")
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
