#!/usr/bin/python3
"""Shows FOLDER in a real Thunar on a private X server (Xvfb) and prints, each time it
changes, what Thunar's file list shows, read through the accessibility bus (AT-SPI) as a
screen reader would: `cells A|B|...` (the texts of its cells, sorted: names, sizes, types,
dates), flushed. No key is pressed, nothing is clicked.
Run it inside `dbus-run-session`, with XDG_CONFIG_HOME set before (xfconfd is started by the
bus and reads Thunar's settings from there: the list view, whose rows AT-SPI shows).
Debian's python3 (pyatspi). Usage: thunar_watch.py FOLDER; stops on SIGTERM."""
import os, signal, subprocess, sys, time

import pyatspi

folder = sys.argv[1]
config = os.path.join(os.environ["XDG_CONFIG_HOME"], "xfce4/xfconf/xfce-perchannel-xml")
os.makedirs(config, exist_ok=True)
with open(os.path.join(config, "thunar.xml"), "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<channel name="thunar" version="1.0">\n'
            '  <property name="default-view" type="string" value="ThunarDetailsView"/>\n'
            '  <property name="last-view" type="string" value="ThunarDetailsView"/>\n</channel>\n')

# Xvfb picks a free display and writes its number to the pipe.
read_end, write_end = os.pipe()
xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                        pass_fds=[write_end], stderr=subprocess.DEVNULL)
os.close(write_end)
display = os.read(read_end, 16).decode().strip()
env = dict(os.environ, DISPLAY=":" + display)
thunar = subprocess.Popen(["thunar", folder], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(*_):
    for p in (thunar, xvfb):
        p.terminate()
    for p in (thunar, xvfb):
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)


def names():
    """The texts of Thunar's file list: the cells of the table inside its 'directory pane'."""
    found = set()

    def walk(acc, depth, in_pane):
        try:
            role, name, count = acc.getRoleName(), acc.name, acc.childCount
        except Exception:
            return
        in_pane = in_pane or role == "directory pane"
        if in_pane and role == "table cell" and name and count == 0:
            found.add(name)
        if depth < 40 and count < 5000:
            for i in range(count):
                try:
                    walk(acc.getChildAtIndex(i), depth + 1, in_pane)
                except Exception:
                    pass

    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None and app.name == "thunar":
            walk(app, 0, False)
    return found


print("started display :" + display, flush=True)
last = None
while True:
    if thunar.poll() is not None:
        print("thunar exited with %s" % thunar.returncode, flush=True)
        stop()
    now = sorted(names())
    if now != last:
        print("cells " + "|".join(now), flush=True)
        last = now
    time.sleep(0.3)
