#!/usr/bin/env python3
"""A fixture server for the Favart media API (see DESIGN.md, "The Favart media API").

Serves one folder of the local disk, written to the spec and nothing more:

  GET    /media[?path=DIR]          -> 200 [{"name": "...", "size": N}, ...] sorted by name; only
                                       .jpg/.jpeg/.png files and folders (a folder's size is its
                                       os.stat size, e.g. 4096; no kind flag). Root: no path.
                                       A missing folder is 500, as the real server answers.
  GET    /file?path=DIR&id=NAME     -> the bytes; Range (one range) gives 206 + Content-Range,
                                       an unsatisfiable one 416 + "Content-Range: bytes */SIZE";
                                       Last-Modified always.
  GET    /preview?path=DIR&id=NAME  -> a JPEG thumbnail 120 px wide (Pillow).
  POST   /media  (form path=DIR)    -> 201, mkdir -p.
  DELETE /media?path=PATH           -> 200, removes a file or a whole tree.
  POST   /file?path=DIR&id=NAME     -> 201, raw body (Content-Length) of at most 25 MiB.
  Errors: {"error": "..."} with 400 (bad request, path traversal), 404, 500.

The quirks of the real server (naturaln0va/favart-api) that clients meet are reproduced: the
extension filter is case-sensitive ('photo.JPG' is stored but never listed; a folder named
'x.jpg' is listed like a file); a missing folder answers 500 to GET /media; an upload into a
missing folder answers 400; an upload over 25 MiB answers 400 and leaves the existing file
truncated to zero bytes.

Query values are decoded like any form (urllib.parse.parse_qs): '+' is a space, so clients must
percent-encode '+', '&' and '=' in names. Every request is logged to stderr, one line each, so
tests can check what was (not) sent.

Usage: favart_server.py ROOT --port PORT [--host 127.0.0.1]
"""
import argparse
import email.utils
import io
import json
import os
import shutil
import sys
import tempfile
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")  # case-sensitive, as the real server compares them
MAX_UPLOAD = 25 * 1024 * 1024
PREVIEW_WIDTH = 120
CHUNK = 256 * 1024

try:
    from PIL import Image  # pip install pillow
except ImportError:  # previews answer 500 then; everything else works
    Image = None


class APIError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def is_image_name(name):
    return name.endswith(IMAGE_EXTENSIONS)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections
    server_version = "favart-fixture/1"
    root = None  # set in main()

    # ---- plumbing

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))
        sys.stderr.flush()

    def query(self):
        parsed = urllib.parse.urlsplit(self.path)
        return parsed.path, urllib.parse.parse_qs(parsed.query, keep_blank_values=True)

    @staticmethod
    def single(params, key, required=True):
        values = params.get(key)
        if not values:
            if required:
                raise APIError(400, "missing parameter '%s'" % key)
            return None
        if len(values) > 1:
            raise APIError(400, "parameter '%s' given %d times" % (key, len(values)))
        return values[0]

    def resolve(self, rel, allow_root=True):
        """DIR or PATH relative to the root -> an absolute path inside it; 400 for traversal."""
        rel = rel or ""
        if "\x00" in rel:
            raise APIError(400, "invalid path: contains NUL")
        parts = [p for p in rel.split("/") if p not in ("",)]
        if any(p in (".", "..") for p in parts):
            raise APIError(400, "invalid path '%s': '.' and '..' are not allowed" % rel)
        full = os.path.join(self.root, *parts) if parts else self.root
        real = os.path.realpath(full)
        if real != self.root and not real.startswith(self.root + os.sep):
            raise APIError(400, "invalid path '%s': outside the served folder" % rel)
        if not parts and not allow_root:
            raise APIError(400, "the root cannot be the target")
        return full

    def resolve_item(self, params):
        folder = self.resolve(self.single(params, "path", required=False))
        name = self.single(params, "id")
        if name in ("", ".", "..") or "/" in name or "\x00" in name:
            raise APIError(400, "invalid id '%s'" % name)
        return folder, os.path.join(folder, name)

    def send_json(self, status, value, extra_headers=()):
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, v in extra_headers:
            self.send_header(name, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error_json(self, status, message):
        self.send_json(status, {"error": message})

    def dispatch(self, routes):
        try:
            path, params = self.query()
            handler = routes.get(path)
            if handler is None:
                raise APIError(404, "no endpoint %s %s" % (self.command, path))
            handler(params)
        except APIError as e:
            if self.command == "POST":
                # The body may not have been read: the connection cannot carry another request.
                self.close_connection = True
            self.send_error_json(e.status, e.message)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a fixture must answer, not hang
            self.close_connection = True
            self.send_error_json(500, "%s: %s" % (type(e).__name__, e))

    def do_GET(self):
        self.dispatch({"/media": self.list_media, "/file": self.get_file, "/preview": self.get_preview})

    def do_POST(self):
        self.dispatch({"/media": self.make_folder, "/file": self.put_file})

    def do_DELETE(self):
        self.dispatch({"/media": self.delete_media})

    # ---- GET /media

    def list_media(self, params):
        folder = self.resolve(self.single(params, "path", required=False))
        if not os.path.isdir(folder):
            # The real server fails reading the folder and answers 500, not 404.
            raise APIError(500, "ENOENT: no such file or directory, scandir '%s'" % (self.single(params, "path", required=False) or "/"))
        entries = []
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    st = entry.stat()
                except OSError:
                    continue  # a dangling symlink
                if entry.is_dir():
                    entries.append({"name": entry.name, "size": st.st_size})
                elif entry.is_file() and is_image_name(entry.name):
                    entries.append({"name": entry.name, "size": st.st_size})
        entries.sort(key=lambda e: e["name"])
        self.send_json(200, entries)

    # ---- GET /file

    def get_file(self, params):
        _, path = self.resolve_item(params)
        if not os.path.isfile(path):
            raise APIError(404, "file not found: %s" % self.single(params, "id"))
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            size = st.st_size
            headers = [("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True)),
                       ("Accept-Ranges", "bytes")]
            span = self.parse_range(self.headers.get("Range"), size)
            if span == "unsatisfiable":
                self.send_json(416, {"error": "range not satisfiable (size %d)" % size},
                               headers + [("Content-Range", "bytes */%d" % size)])
                return
            start, end = span if span else (0, size - 1)
            length = max(0, end - start + 1)
            self.send_response(206 if span else 200)
            self.send_header("Content-Type", "image/png" if path.lower().endswith(".png") else "image/jpeg")
            self.send_header("Content-Length", str(length))
            if span:
                headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end, size)))
            for name, v in headers:
                self.send_header(name, v)
            self.end_headers()
            f.seek(start)
            remaining = length
            while remaining > 0:
                chunk = f.read(min(CHUNK, remaining))
                if not chunk:
                    break
                self.wfile.write(chunk)
                remaining -= len(chunk)
            if remaining > 0:  # the file shrank while sending: the length is a lie now
                self.close_connection = True

    @staticmethod
    def parse_range(value, size):
        """One 'bytes=' range -> (start, end) inclusive; None to send everything; 'unsatisfiable'."""
        if not value:
            return None
        unit, _, spec = value.partition("=")
        if unit.strip().lower() != "bytes" or "," in spec:
            return None  # other units and multiple ranges: the whole content (RFC 9110 allows it)
        first, dash, last = spec.strip().partition("-")
        if not dash:
            return None
        try:
            if first == "":
                n = int(last)
                if n <= 0:
                    return "unsatisfiable"
                return (max(0, size - n), size - 1) if size > 0 else "unsatisfiable"
            start = int(first)
            end = int(last) if last else size - 1
        except ValueError:
            return None
        if start >= size:
            return "unsatisfiable"
        if end < start:
            return None
        return (start, min(end, size - 1))

    # ---- GET /preview

    def get_preview(self, params):
        _, path = self.resolve_item(params)
        if not os.path.isfile(path):
            raise APIError(404, "file not found: %s" % self.single(params, "id"))
        if Image is None:
            raise APIError(500, "previews need Pillow (pip install pillow)")
        try:
            with Image.open(path) as image:
                image = image.convert("RGB")
                height = max(1, round(image.height * PREVIEW_WIDTH / image.width))
                thumb = image.resize((PREVIEW_WIDTH, height))
        except Exception as e:
            raise APIError(500, "cannot make a preview of %s: %s" % (self.single(params, "id"), e))
        out = io.BytesIO()
        thumb.save(out, "JPEG", quality=80)
        body = out.getvalue()
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    # ---- POST /media (mkdir -p)

    def read_body(self, limit):
        length = self.headers.get("Content-Length")
        if length is None:
            raise APIError(400, "Content-Length is required")
        try:
            length = int(length)
        except ValueError:
            raise APIError(400, "bad Content-Length '%s'" % length)
        if length < 0:
            raise APIError(400, "bad Content-Length %d" % length)
        if length > limit:
            raise APIError(413, "too large: %d bytes (at most %d)" % (length, limit))
        return length

    def make_folder(self, params):
        length = self.read_body(64 * 1024)
        form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True)
        rel = self.single(form, "path")
        folder = self.resolve(rel, allow_root=False)
        try:
            os.makedirs(folder, exist_ok=True)
        except FileExistsError:
            raise APIError(400, "a file is in the way: %s" % rel)
        except NotADirectoryError:
            raise APIError(400, "a file is in the way: %s" % rel)
        self.send_json(201, {"path": rel})

    # ---- DELETE /media

    def delete_media(self, params):
        rel = self.single(params, "path")
        path = self.resolve(rel, allow_root=False)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        else:
            raise APIError(404, "not found: %s" % rel)
        self.send_json(200, {"path": rel})

    # ---- POST /file

    def put_file(self, params):
        folder, path = self.resolve_item(params)
        if not os.path.isdir(folder):
            raise APIError(400, "upload failed: no such folder %s" % (self.single(params, "path", required=False) or "/"))
        if os.path.isdir(path):
            raise APIError(400, "a folder is in the way: %s" % self.single(params, "id"))
        content_type = (self.headers.get("Content-Type") or "").lower()
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            # The body is the file's bytes; a form would be stored as its encoding.
            raise APIError(400, "POST /file takes the raw bytes, not a form (%s)" % content_type)
        declared = self.headers.get("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_UPLOAD:
            # The real server opens the target for writing before its size limit trips: the
            # existing file is left empty, and the answer is 400.
            if os.path.isfile(path):
                open(path, "wb").close()
            raise APIError(400, "File too large")
        length = self.read_body(MAX_UPLOAD)
        # Written beside the target and renamed over it: a reader never sees half a file.
        fd, temp = tempfile.mkstemp(prefix=".upload-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                remaining = length
                while remaining > 0:
                    chunk = self.rfile.read(min(CHUNK, remaining))
                    if not chunk:
                        raise APIError(400, "the body ended after %d of %d bytes" % (length - remaining, length))
                    out.write(chunk)
                    remaining -= len(chunk)
            os.chmod(temp, 0o644)
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise
        self.send_json(201, {"name": os.path.basename(path), "size": length})


def main():
    parser = argparse.ArgumentParser(description="Favart media API fixture server")
    parser.add_argument("root", help="the folder to serve")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    Handler.root = os.path.realpath(args.root)
    if not os.path.isdir(Handler.root):
        sys.exit("not a folder: %s" % args.root)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print("favart fixture: serving %s on http://%s:%d/ (previews: %s)"
          % (Handler.root, args.host, args.port, "Pillow" if Image else "unavailable, pip install pillow"), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
