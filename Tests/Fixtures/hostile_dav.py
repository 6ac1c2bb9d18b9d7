#!/usr/bin/env python3
"""A WebDAV server that lies, for favfs's fault tests: it answers PROPFIND on / with entries no
sane server sends (absurd sizes and dates, duplicate names, hrefs outside the folder, names with
'/' or NUL once decoded, names over 255 bytes) and serves a GET shorter than its Content-Length.
Folders not in the root's listing, for listings parsed while they arrive: /slow/ sends a
2,000-entry listing in five pieces 150 ms apart, /badutf8/ has bytes that are not UTF-8 about
300 KB in, /cut/ closes the connection halfway through its Content-Length, /nodepth/ answers
even a `Depth: 0` PROPFIND with its whole 2,000-entry listing (as servers that ignore Depth do),
/moving.txt has a new ETag at every PROPFIND and takes every PROPPATCH without keeping it (a file
another client keeps rewriting).

usage: hostile_dav.py PORT
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GOOD = b"good content\n"
LONG_NAME = "n" * 300

ENTRIES = [
    # (href, size text, date text, is folder)
    ("/huge.bin", "9223372036854775807", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/negative.bin", "-5", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/nonnumeric.bin", "lots", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/future.txt", "13", "Fri, 01 Jan 99999 00:00:00 GMT", False),
    ("/baddate.txt", "13", "yesterday-ish", False),
    ("/dup.txt", "13", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/dup.txt", "99", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/../escape.txt", "13", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/other/elsewhere.txt", "13", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/a%2Fb.txt", "13", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/nul%00.txt", "13", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/" + LONG_NAME, "13", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/short.bin", "100000", "Mon, 23 Nov 2026 10:00:00 GMT", False),
    ("/good.txt", str(len(GOOD)), "Mon, 23 Nov 2026 10:00:00 GMT", False),
    # A folder whose PROPFIND gets a login page with 200 OK, as a captive portal or a
    # misrouted proxy sends.
    ("/plain/", "0", "Mon, 23 Nov 2026 10:00:00 GMT", True),
]


def response(href, size, date, folder, etag=None):
    etag = etag or f"{abs(hash(href)) % 100000}"
    kind = "<D:resourcetype><D:collection/></D:resourcetype>" if folder else "<D:resourcetype/>"
    return (f"<D:response><D:href>{href}</D:href><D:propstat><D:prop>{kind}"
            f"<D:getcontentlength>{size}</D:getcontentlength><D:getlastmodified>{date}</D:getlastmodified>"
            f"<D:getetag>\"{etag}\"</D:getetag></D:prop>"
            f"<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")


def many(folder, n):
    """A listing of `folder` with n files, as bytes."""
    body = ['<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">',
            response(folder, "0", "Mon, 23 Nov 2026 10:00:00 GMT", True)]
    body += [response(f"{folder}file-{i:05d}.txt", str(i), "Mon, 23 Nov 2026 10:00:00 GMT", False) for i in range(n)]
    body.append("</D:multistatus>")
    return "".join(body).encode()


MOVES = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_PROPPATCH(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        data = (f'<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:"><D:response>'
                f'<D:href>{self.path}</D:href><D:propstat><D:prop/><D:status>HTTP/1.1 200 OK</D:status>'
                f'</D:propstat></D:response></D:multistatus>').encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def moving(self):
        MOVES[0] += 1
        data = ('<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">'
                + response("/moving.txt", "13", "Mon, 23 Nov 2026 10:00:00 GMT", False, etag=f"move-{MOVES[0]}")
                + "</D:multistatus>").encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass

    def do_OPTIONS(self):
        self.send_response(200)
        self.send_header("DAV", "1")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PROPFIND(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.path == "/plain/":
            page = b"<html><body><form>Please log in</form></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        if self.path == "/moving.txt":
            self.moving()
            return
        if self.path == "/nodepth":
            self.path = "/nodepth/"
        if self.path in ("/slow/", "/badutf8/", "/cut/", "/nodepth/"):
            self.listing_in_pieces()
            return
        if self.path != "/":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = ['<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">',
                response("/", "0", "Mon, 23 Nov 2026 10:00:00 GMT", True)]
        if self.headers.get("Depth") != "0":
            body += [response(*e) for e in ENTRIES]
        body.append("</D:multistatus>")
        data = "".join(body).encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def listing_in_pieces(self):
        import time
        data = many(self.path, 2000)
        if self.path == "/badutf8/":
            at = data.index(b"file-01000.txt")
            data = data[:at] + b"\xff\xfe" + data[at + 2:]
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.path == "/cut/":
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        step = len(data) // 5 + 1
        for i in range(0, len(data), step):
            self.wfile.write(data[i:i + step])
            self.wfile.flush()
            if self.path == "/slow/":
                time.sleep(0.15)

    def do_GET(self):
        if self.path == "/good.txt":
            self.send_response(200)
            self.send_header("Content-Length", str(len(GOOD)))
            self.end_headers()
            self.wfile.write(GOOD)
            return
        if self.path == "/short.bin":
            # Promises 100,000 bytes, sends 1,000, closes the connection.
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"x" * 1000)
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()



if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
