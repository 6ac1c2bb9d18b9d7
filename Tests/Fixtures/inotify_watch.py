#!/usr/bin/env python3
"""Watches one folder with inotify (what a file manager does) and prints each event as
`EVENT[,ISDIR] NAME`, flushed, until killed. Prints `ready` once the watch is set.
With --times, each event line starts with the time it was read (seconds since the epoch).
Usage: inotify_watch.py [--times] FOLDER"""
import ctypes, os, struct, sys, time

times = sys.argv[1] == "--times"
folder = sys.argv[2] if times else sys.argv[1]

IN_MODIFY, IN_ATTRIB, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x4, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_ISDIR = 0x100, 0x200, 0x400, 0x40000000
NAMES = [(IN_MODIFY, "MODIFY"), (IN_ATTRIB, "ATTRIB"), (IN_MOVED_FROM, "MOVED_FROM"), (IN_MOVED_TO, "MOVED_TO"),
         (IN_CREATE, "CREATE"), (IN_DELETE, "DELETE"), (IN_DELETE_SELF, "DELETE_SELF")]

libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
if fd < 0:
    sys.exit("inotify_init1: " + os.strerror(ctypes.get_errno()))
mask = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF
if libc.inotify_add_watch(fd, folder.encode(), mask) < 0:
    sys.exit("inotify_add_watch %s: %s" % (folder, os.strerror(ctypes.get_errno())))
print("ready", flush=True)
while True:
    buf = os.read(fd, 65536)
    at = 0
    while at + 16 <= len(buf):
        _, m, _, length = struct.unpack_from("iIII", buf, at)
        name = buf[at + 16:at + 16 + length].rstrip(b"\0").decode("utf-8", "replace")
        at += 16 + length
        kinds = [n for bit, n in NAMES if m & bit] + (["ISDIR"] if m & IN_ISDIR else [])
        print(("%.3f " % time.time() if times else "") + ",".join(kinds) + " " + name, flush=True)
