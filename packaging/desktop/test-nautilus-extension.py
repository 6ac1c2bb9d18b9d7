#!/usr/bin/python3
"""Tests favfs's Nautilus extension against a real mount, without Nautilus running:
    test-nautilus-extension.py EXTENSION FILE
EXTENSION: favfs-nautilus.py; FILE: a regular file in a favfs mount, not open and not changed
here (it is evicted, pinned, and left evicted and unpinned). favfs is $FAVFS, else the one on PATH.

First the logic with gi hidden (the extension must import without Nautilus); then, where
python3-nautilus is installed, the extension as Nautilus loads it: its providers instantiated,
their menu items activated and emblems read, with GLib's main loop turned by hand.
Debian's python3 (/usr/bin/python3): nautilus-python embeds it, and gi is its package."""
import importlib.util
import os
import sys
import time

failures = 0


def check(what, got, want):
    global failures
    if got == want:
        print(f"test-nautilus-extension: ok: {what}")
    else:
        failures += 1
        print(f"test-nautilus-extension: FAILED: {what}: got {got!r}, want {want!r}", file=sys.stderr)


def load(path, name, hide_gi):
    saved = sys.modules.get("gi", "absent")
    if hide_gi:
        sys.modules["gi"] = None  # import gi raises ImportError, as without python3-gi
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if hide_gi:
            if saved == "absent":
                del sys.modules["gi"]
            else:
                sys.modules["gi"] = saved


def wait_for(condition, seconds=20, turn=None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if turn is not None:
            turn()
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def logic(ext, file):
    # Mount table parsing: escapes, optional fields, the fstype after "-".
    check("unescape \\040 and \\134", ext.unescape_mountinfo(r"/m/a\040b\134c\011d"), "/m/a b\\c\td")
    line = r"42 27 0:39 / /tmp/fm\040mnt rw,nosuid shared:1 master:2 - fuse.favfs favfs:x rw"
    check("parse a mountinfo line", ext.parse_mountinfo(line + "\n"), [("/tmp/fm mnt", "fuse.favfs")])
    mounts = [("/", "ext4"), ("/srv/r", "fuse.favfs"), ("/srv/r/usb", "vfat"), ("/srv/r2", "ext4")]
    check("inside a favfs mount", ext.is_favfs_path("/srv/r/a/b.txt", mounts), True)
    check("the mount point itself", ext.is_favfs_path("/srv/r", mounts), True)
    check("a mount inside the favfs mount", ext.is_favfs_path("/srv/r/usb/x", mounts), False)
    check("a name that only starts like the mount point", ext.is_favfs_path("/srv/r2/x", mounts), False)
    check("out through ..", ext.is_favfs_path("/srv/r/../r2/x", mounts), False)

    # The real mount.
    mountpoint = ext.mount_of(file, ext.read_mounts())[0]
    check(f"{file} is in a favfs mount", ext.is_favfs_path(file), True)
    check(f"its mount point {mountpoint} is", ext.is_favfs_path(mountpoint), True)
    check("/tmp is not", ext.is_favfs_path("/tmp"), False)
    check(f"{mountpoint}x is not", ext.is_favfs_path(mountpoint + "x"), False)

    # Emblems by state.
    for state, pinned, want in [
        ("placeholder", False, ["emblem-web"]),
        ("materialized", True, ["view-pin-symbolic", "emblem-default"]),
        ("partial 37%", False, []),
        ("dirty", False, ["emblem-synchronizing"]),
        ("uploading 12%", True, ["view-pin-symbolic", "emblem-synchronizing"]),
        ("conflict", False, ["emblem-important"]),
        ("error: 503 from the server", False, ["emblem-important"]),
        ("upload refused: too large", False, ["emblem-important"]),
        ("folder", True, ["view-pin-symbolic"]),
        ("symlink", False, []),
    ]:
        check(f"emblems for {state!r}, pinned={pinned}", ext.emblems_for(state, pinned), want)

    # The commands the menu runs.
    favfs = ext.favfs_binary()
    for action in ("pin", "evict", "status"):
        check(f"argv of {action}", ext.action_argv(action, [file, mountpoint]), [favfs, action, file, mountpoint])
    here = os.getcwd()
    os.chdir(mountpoint)
    try:
        name = os.path.relpath(file, mountpoint)
        check("a relative path made absolute", ext.action_argv("pin", [name])[2], os.path.join(mountpoint, name))
    finally:
        os.chdir(here)
    for bad in (("unpin", [file]), ("pin", [])):
        try:
            ext.action_argv(*bad)
            check(f"action_argv{bad} refused", "accepted", "ValueError")
        except ValueError:
            check(f"action_argv{bad} refused", "ValueError", "ValueError")

    # Running them on the real file, and the emblems that follow.
    status, output = ext.run_action("evict", [file])
    check("evict exits 0", (status, output if status else ""), (0, ""))
    check("evicted: placeholder, unpinned", ext.read_state(file), ("placeholder", False))
    check("emblem for a placeholder", ext.emblems_for_path(file), ["emblem-web"])
    status, output = ext.run_action("pin", [file])
    check("pin exits 0", (status, output), (0, ""))
    wait_for(lambda: ext.read_state(file)[0] == "materialized")
    check("pinned: downloaded", ext.read_state(file), ("materialized", True))
    check("emblems for a pinned, downloaded file", ext.emblems_for_path(file), ["view-pin-symbolic", "emblem-default"])
    status, output = ext.run_action("status", [file])
    check("status says it", (status, output), (0, f"materialized, pinned\t{file}"))
    check("no emblem for a path that is gone", ext.emblems_for_path(file + ".gone"), [])


class FakeFileInfo:
    """What the providers ask of a Nautilus.FileInfo."""

    def __init__(self, path, scheme="file"):
        from gi.repository import Gio
        self.path, self.scheme = path, scheme
        self.location = Gio.File.new_for_path(path)
        self.emblems, self.invalidated = [], 0

    def get_uri_scheme(self):
        return self.scheme

    def get_location(self):
        return self.location

    def add_emblem(self, name):
        self.emblems.append(name)

    def invalidate_extension_info(self):  # as Nautilus: the extension's emblems go
        self.invalidated += 1
        self.emblems = []


def with_nautilus(path, file):
    try:
        import gi
        gi.require_version("Nautilus", "4.0")
        from gi.repository import GLib, Nautilus
    except (ImportError, ValueError) as e:
        print(f"test-nautilus-extension: skipped the providers: no Nautilus 4.0 typelib ({e})")
        return
    ext = load(path, "favfs_nautilus_in_nautilus", hide_gi=False)
    check("providers defined", (issubclass(ext.FavfsMenuProvider, Nautilus.MenuProvider),
                                issubclass(ext.FavfsInfoProvider, Nautilus.InfoProvider)), (True, True))
    menu, info = ext.FavfsMenuProvider(), ext.FavfsInfoProvider()
    context = GLib.MainContext.default()

    def turn():
        while context.iteration(False):
            pass

    mountpoint = ext.mount_of(file, ext.read_mounts())[0]
    inside = [FakeFileInfo(file), FakeFileInfo(mountpoint)]
    items = menu.get_file_items(inside)
    labels = [i.get_property("label") for i in items]
    check("menu for files in the mount", labels, ["Keep on this device", "Free up space", "Show sync status"])
    check("no menu with /tmp selected too", menu.get_file_items(inside + [FakeFileInfo("/tmp")]), [])
    check("no menu outside", menu.get_file_items([FakeFileInfo("/tmp")]), [])
    check("no menu for a non-file URI", menu.get_file_items([FakeFileInfo(file, scheme="sftp")]), [])

    # "Free up space" on the file: favfs evict in a thread, then the emblems asked again.
    target = FakeFileInfo(file)
    evict = {i.get_property("label"): i for i in menu.get_file_items([target])}["Free up space"]
    evict.activate()
    done = wait_for(lambda: target.invalidated > 0, turn=turn)
    check("Free up space ran and invalidated the emblems", (done, ext.read_state(file)), (True, ("placeholder", False)))

    # Emblems: answered at once from what was last read; read off the main loop, and Nautilus
    # told to ask again when that differs.
    done = Nautilus.OperationResult.COMPLETE
    outside = FakeFileInfo("/tmp")
    check("emblems outside: none, nothing read", (info.update_file_info(outside), outside.emblems,
                                                 info._pending), (done, [], set()))
    first = FakeFileInfo(file)
    check("emblems inside, first ask: none known yet", (info.update_file_info(first), first.emblems), (done, []))
    read = wait_for(lambda: first.invalidated > 0, turn=turn)
    check("read off the main loop, then Nautilus told to ask again", (read, first.invalidated), (True, 1))
    info.update_file_info(first)
    check("asked again: the evicted file's emblems", first.emblems, ["emblem-web"])
    again = FakeFileInfo(file)
    info.update_file_info(again)
    wait_for(lambda: not info._pending, turn=turn)
    turn()
    check("a later ask: what was known at once, read again, unchanged: not invalidated",
          (again.emblems, again.invalidated), (["emblem-web"], 0))
    ext.run_action("pin", [file])
    wait_for(lambda: ext.read_state(file)[0] == "materialized")
    changed = FakeFileInfo(file)
    info.update_file_info(changed)
    stale = list(changed.emblems)
    wait_for(lambda: changed.invalidated > 0, turn=turn)
    info.update_file_info(changed)
    check("pinned since: the stale emblem at once, then the new ones",
          (stale, changed.emblems), (["emblem-web"], ["view-pin-symbolic", "emblem-default"]))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test-nautilus-extension.py EXTENSION FILE")
    path, file = sys.argv[1], os.path.abspath(sys.argv[2])
    os.environ.pop("DISPLAY", None)  # results go to standard error, not to a dialog
    os.environ.pop("WAYLAND_DISPLAY", None)
    ext = load(path, "favfs_nautilus_logic", hide_gi=True)
    check("imports without Nautilus", ext.Nautilus, None)
    logic(ext, file)
    with_nautilus(path, file)
    ext.run_action("evict", [file])  # left as found: unpinned, nothing downloaded
    if failures:
        sys.exit(f"test-nautilus-extension: {failures} FAILED")
    print("test-nautilus-extension: all passed")


main()
