#!/usr/bin/python3
"""A freedesktop notification server for tests, on a bus given by address.

    notification_server.py BUS_ADDRESS LOG

Owns org.freedesktop.Notifications and answers Notify (with a new id), GetCapabilities and
GetServerInformation. Each Notify is one JSON line in LOG (app, replaces_id, icon, summary, body,
actions, hints as strings, timeout), as GLib decoded it. Prints READY on stdout once it owns
the name. Runs with Debian's python3-gi (/usr/bin/python3): only the standard library and Gio.
"""
import json
import sys

from gi.repository import Gio, GLib

XML = """<node><interface name="org.freedesktop.Notifications">
<method name="Notify">
  <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
  <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
  <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
</method>
<method name="GetCapabilities"><arg type="as" direction="out"/></method>
<method name="GetServerInformation">
  <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
</method>
<method name="CloseNotification"><arg type="u" direction="in"/></method>
</interface></node>"""

address, log_path = sys.argv[1], sys.argv[2]
log = open(log_path, "a", buffering=1)
next_id = [0]


def call(conn, sender, path, interface, method, params, invocation):
    if method == "Notify":
        app, replaces, icon, summary, body, actions, hints, timeout = params.unpack()
        next_id[0] += 1
        log.write(json.dumps({"app": app, "replaces_id": replaces, "icon": icon, "summary": summary,
                              "body": body, "actions": actions,
                              "hints": {k: str(v) for k, v in hints.items()}, "timeout": timeout,
                              "sender": sender}) + "\n")
        invocation.return_value(GLib.Variant("(u)", (next_id[0],)))
    elif method == "GetCapabilities":
        invocation.return_value(GLib.Variant("(as)", (["body", "body-markup"],)))
    elif method == "GetServerInformation":
        invocation.return_value(GLib.Variant("(ssss)", ("favfs-test", "favfs", "1", "1.2")))
    else:
        invocation.return_value(None)


conn = Gio.DBusConnection.new_for_address_sync(
    address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
node = Gio.DBusNodeInfo.new_for_xml(XML)
conn.register_object("/org/freedesktop/Notifications", node.interfaces[0], call, None, None)
loop = GLib.MainLoop()


def acquired(*_):
    print("READY", flush=True)


def lost(*_):
    print("name lost", flush=True)
    loop.quit()


Gio.bus_own_name_on_connection(conn, "org.freedesktop.Notifications", Gio.BusNameOwnerFlags.NONE, acquired, lost)
loop.run()
