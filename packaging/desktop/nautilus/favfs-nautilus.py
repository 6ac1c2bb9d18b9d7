# favfs in Nautilus (nautilus-python 4.0, Debian 12's python3-nautilus): a context menu with
# "Keep on this device" (favfs pin), "Free up space" (favfs evict) and "Show sync status"
# (favfs status) for files and folders in favfs mounts, and emblems from user.favfs.state and
# user.favfs.pin.
#
# The logic Nautilus does not need (which paths are in a favfs mount, which emblems a state gets,
# the command an action runs) comes first and imports without Nautilus, so
# packaging/desktop/test-nautilus-extension.py tests it against a real mount.
import os
import shutil
import subprocess
import sys
import threading
import time

FSTYPE = "fuse.favfs"
MOUNTINFO = "/proc/self/mountinfo"

# The menu: (action, label, tip); the action is favfs's subcommand.
ACTIONS = (
    ("pin", "Keep on this device", "Download now and keep downloaded (favfs pin)"),
    ("evict", "Free up space", "Remove the downloaded content; names stay (favfs evict)"),
    ("status", "Show sync status", "What is downloaded, changed or uploading (favfs status)"),
)

# Icon names that Debian 12's adwaita-icon-theme (43) has: view-pin-symbolic in
# Adwaita/*/actions, the emblem-* ones in Adwaita/*/legacy (and hicolor fallbacks of
# emblem-default and emblem-important); Nautilus looks each up in the icon theme.
EMBLEM_PINNED = "view-pin-symbolic"
EMBLEM_MATERIALIZED = "emblem-default"
EMBLEM_PLACEHOLDER = "emblem-web"
EMBLEM_SYNCING = "emblem-synchronizing"
EMBLEM_PROBLEM = "emblem-important"


def unescape_mountinfo(field):
    """A mountinfo field with the kernel's octal escapes (\\040 space, \\011 tab, \\012 newline,
    \\134 backslash) decoded."""
    out, i = [], 0
    while i < len(field):
        chunk = field[i:i + 4]
        if len(chunk) == 4 and chunk[0] == "\\" and all(c in "01234567" for c in chunk[1:]):
            out.append(chr(int(chunk[1:], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text):
    """[(mountpoint, fstype)] of every mount in mountinfo text, in its order."""
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        # The optional fields end at "-"; the file system type is the next field.
        if len(fields) < 7 or "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)
        if sep + 1 < len(fields):
            mounts.append((unescape_mountinfo(fields[4]), fields[sep + 1]))
    return mounts


def read_mounts(path=MOUNTINFO):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return parse_mountinfo(f.read())


def mount_of(path, mounts):
    """The innermost mount holding path: (mountpoint, fstype), or None. Lexical only (no stat,
    no symlinks followed), so it never waits for a mount that does not answer; a later mount on
    the same point hides an earlier one, as the kernel does."""
    path = os.path.normpath(os.path.abspath(path))
    best = None
    for point, fstype in mounts:
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fstype)
    return best


def is_favfs_path(path, mounts=None):
    found = mount_of(path, read_mounts() if mounts is None else mounts)
    return found is not None and found[1] == FSTYPE


def emblems_for(state, pinned):
    """Emblem icon names for a user.favfs.state value and whether user.favfs.pin is 1."""
    emblems = [EMBLEM_PINNED] if pinned else []
    if state == "materialized":
        emblems.append(EMBLEM_MATERIALIZED)
    elif state == "placeholder":
        emblems.append(EMBLEM_PLACEHOLDER)
    elif state == "dirty" or state.startswith("uploading"):
        emblems.append(EMBLEM_SYNCING)
    elif state == "conflict" or state.startswith("error") or state.startswith("upload refused"):
        emblems.append(EMBLEM_PROBLEM)
    # partial N%, folder, symlink: nothing more to say on an icon.
    return emblems


def read_state(path):
    """(state, pinned) from favfs's extended attributes, which it answers from memory."""
    state = os.getxattr(path, "user.favfs.state", follow_symlinks=False).decode("utf-8", "replace")
    pin = os.getxattr(path, "user.favfs.pin", follow_symlinks=False)
    return state, pin.strip() == b"1"


def emblems_for_path(path):
    try:
        return emblems_for(*read_state(path))
    except OSError:  # gone, or a mount with --no-xattrs: no emblem rather than a wrong one
        return []


def favfs_binary():
    # FAVFS: another binary (a test, a build tree); else the one on PATH, else the package's.
    return os.environ.get("FAVFS") or shutil.which("favfs") or "/usr/bin/favfs"


def action_argv(action, paths, favfs=None):
    if action not in {a for a, _, _ in ACTIONS}:
        raise ValueError(f"unknown action {action!r}")
    if not paths:
        raise ValueError("no paths")
    # Absolute paths: none starts with "-", so none reads as an option.
    return [favfs or favfs_binary(), action] + [os.path.abspath(p) for p in paths]


def run_action(action, paths, timeout=600):
    """Runs favfs; (exit status, its output). Called off Nautilus' main loop."""
    try:
        done = subprocess.run(action_argv(action, paths), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        return done.returncode, (done.stdout + done.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)


def result_text(action, status, paths, output):
    """What to show: favfs's own words; pin says nothing when it is done."""
    if output:
        return output
    if status != 0:
        return f"favfs {action} failed (exit status {status})."
    names = ", ".join(os.path.basename(p.rstrip("/")) or p for p in paths)
    if action == "pin":
        return f"Kept on this device, downloading in the background: {names}"
    return f"Done: {names}"


def notifier_argv(action, status, title, text):
    """A command that shows the result without Nautilus, or None: zenity for status and for
    failures (a dialog, text not parsed as markup), notify-send for a done pin or evict."""
    quiet = action != "status" and status == 0
    if quiet and shutil.which("notify-send"):
        return ["notify-send", "--app-name=favfs", title, text]
    if shutil.which("zenity"):
        kind = "--info" if status == 0 else "--error"
        return ["zenity", kind, "--no-markup", "--title", title, "--text", text]
    if shutil.which("notify-send"):
        urgency = "normal" if status == 0 else "critical"
        return ["notify-send", "--app-name=favfs", f"--urgency={urgency}", title, text]
    return None


# The mount table, read again at most once a second: Nautilus asks for every file it shows.
_mounts_cache = {"at": -10.0, "mounts": []}
_mounts_lock = threading.Lock()


def current_mounts():
    with _mounts_lock:
        now = time.monotonic()
        if now - _mounts_cache["at"] > 1.0:
            try:
                _mounts_cache["mounts"] = read_mounts()
            except OSError:
                _mounts_cache["mounts"] = []
            _mounts_cache["at"] = now
        return _mounts_cache["mounts"]


def local_path(file_info):
    """The local path of a Nautilus file (file:// only), or None."""
    if file_info.get_uri_scheme() != "file":
        return None
    location = file_info.get_location()
    return location.get_path() if location is not None else None


def favfs_paths(files):
    """The selection's paths if every one is in a favfs mount, else None."""
    mounts = current_mounts()
    paths = [local_path(f) for f in files]
    if not paths or any(p is None or not is_favfs_path(p, mounts) for p in paths):
        return None
    return paths


try:
    import gi
    gi.require_version("Nautilus", "4.0")
    from gi.repository import GLib, GObject, Nautilus
except (ImportError, ValueError):  # not in Nautilus (a test, python3-nautilus missing)
    Nautilus = None

if Nautilus is not None:
    from concurrent.futures import ThreadPoolExecutor

    TITLES = {action: f"favfs: {label}" for action, label, _ in ACTIONS}

    def show_result(action, status, text):
        """On the main loop: zenity or notify-send if there is one, else a GTK dialog; with no
        display (a test), standard error."""
        title = TITLES[action]
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            print(f"favfs-nautilus: {title}: {text}", file=sys.stderr)
            return False
        argv = notifier_argv(action, status, title, text)
        if argv is not None:
            try:
                shown = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
                # Waited for in a thread, so no zombie is left while a dialog stays open.
                threading.Thread(target=shown.wait, name="favfs-notifier", daemon=True).start()
                return False
            except OSError:
                pass
        try:
            gi.require_version("Gtk", "4.0")
            from gi.repository import Gtk
            kind = Gtk.MessageType.INFO if status == 0 else Gtk.MessageType.ERROR
            dialog = Gtk.MessageDialog(message_type=kind, buttons=Gtk.ButtonsType.CLOSE,
                                       text=title, secondary_text=text)
            dialog.connect("response", lambda d, _r: d.destroy())
            dialog.present()
        except Exception as e:  # no display: the result goes to Nautilus' log
            print(f"favfs-nautilus: {title}: {text} ({e})", file=sys.stderr)
        return False  # an idle callback: once

    class FavfsMenuProvider(GObject.GObject, Nautilus.MenuProvider):
        def get_file_items(self, files):
            paths = favfs_paths(files)
            if paths is None:
                return []
            items = []
            for action, label, tip in ACTIONS:
                item = Nautilus.MenuItem(name=f"FavfsMenuProvider::{action}", label=label, tip=tip)
                item.connect("activate", self._activate, action, paths, list(files))
                items.append(item)
            return items

        def _activate(self, _item, action, paths, files):
            # favfs in a thread: pin and status answer at once, but evict waits for the daemon
            # and a mount that does not answer must not freeze Nautilus.
            def work():
                status, output = run_action(action, paths)
                text = result_text(action, status, paths, output)
                GLib.idle_add(self._done, action, status, text, files)
            threading.Thread(target=work, name=f"favfs-{action}", daemon=True).start()

        def _done(self, action, status, text, files):
            if action != "status":
                for f in files:  # emblems asked again: pinned, or now placeholders
                    f.invalidate_extension_info()
            show_result(action, status, text)
            return False

    class FavfsInfoProvider(GObject.GObject, Nautilus.InfoProvider):
        """Emblems, answered at once from what was last read, and read again in a worker thread:
        favfs answers its attributes from memory, but a mount that hangs must not hang Nautilus'
        main loop. When what is read differs from what was shown, the file's extension info is
        invalidated and Nautilus asks again. (Not nautilus-python's update_file_info_full:
        Nautilus gives it no usable handle to match a late answer or a cancel with.)"""

        MAX_KNOWN = 20000  # paths remembered; forgotten all at once beyond it

        def __init__(self):
            super().__init__()
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="favfs-emblems")
            # Touched on the main loop only: by update_file_info and by _store, an idle callback.
            self._known = {}       # path: emblems last read
            self._fresh = set()    # read since Nautilus last asked: answer without reading again
            self._pending = set()  # being read

        def update_file_info(self, file):
            path = local_path(file)
            if path is None or not is_favfs_path(path, current_mounts()):
                return Nautilus.OperationResult.COMPLETE
            for emblem in self._known.get(path, []):
                file.add_emblem(emblem)
            if path in self._fresh:
                self._fresh.discard(path)
            elif path not in self._pending:
                self._pending.add(path)
                self._pool.submit(self._read, file, path)
            return Nautilus.OperationResult.COMPLETE

        def _read(self, file, path):
            GLib.idle_add(self._store, file, path, emblems_for_path(path))

        def _store(self, file, path, emblems):
            self._pending.discard(path)
            if len(self._known) >= self.MAX_KNOWN:
                self._known.clear()
            changed = self._known.get(path, []) != emblems
            self._known[path] = emblems
            if changed:
                self._fresh.add(path)
                file.invalidate_extension_info()  # Nautilus asks again, and gets these
            return False
