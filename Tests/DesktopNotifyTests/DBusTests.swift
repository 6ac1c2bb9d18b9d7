import DesktopNotify
import Foundation
import TestSupport
import XCTest

/// The D-Bus client against GLib's decoder and a real dbus-daemon with a notification server
/// (Tests/Fixtures/notification_server.py): no mock of the bus.
final class DBusTests: XCTestCase {
    static let note = DesktopNotifier.Note(key: "k", summary: "favfs: conflict in a.txt",
                                           body: "/mnt/a.txt → a (conflict 2026-11-27 070000).txt", category: "transfer.error")

    func notifyMessage(serial: UInt32 = 7) -> DBusMessage {
        .methodCall(serial: serial, destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                    interface: "org.freedesktop.Notifications", member: "Notify", body: DesktopNotifier.notifyArguments(Self.note))
    }

    func requireBus() throws {
        guard PrivateSessionBus.isAvailable else {
            if TestEnvironment.isCI { throw ShellError("CI=true and these tests need dbus-daemon and python3-gi") }
            throw XCTSkip("needs /usr/bin/dbus-daemon and python3-gi")
        }
    }

    /// The fixed part of the header, byte for byte (specification, "Message Format").
    func testHeaderBytes() throws {
        let bytes = try DBusMessage.methodCall(serial: 1, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                               interface: "org.freedesktop.DBus", member: "Hello").encoded()
        XCTAssertEqual(Array(bytes.prefix(12)), [0x6c, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0])
        // Four fields (path, interface, member, destination; no signature for an empty body):
        // each (yv) 8-aligned; the header ends 8-aligned.
        XCTAssertEqual(bytes.count % 8, 0)
        XCTAssertEqual(Array(bytes[16..<24]), [1, 1, UInt8(ascii: "o"), 0, 21, 0, 0, 0])  // PATH, signature "o", length 21
        XCTAssertEqual(String(decoding: bytes[24..<45], as: UTF8.self), "/org/freedesktop/DBus")
    }

    func testRoundTrip() throws {
        let m = notifyMessage()
        let decoded = try DBusMessage.decode(try m.encoded())
        XCTAssertEqual(decoded, m)
        XCTAssertEqual(decoded.signature, "susssasa{sv}i")
    }

    /// GLib's own decoder (Gio.DBusMessage.new_from_blob) reads our Notify call as sent.
    func testGLibDecodesTheNotifyCall() throws {
        try requireBus()
        let hex = try notifyMessage().encoded().map { String(format: "%02x", $0) }.joined()
        let script = """
            import sys
            from gi.repository import Gio
            m = Gio.DBusMessage.new_from_blob(bytes.fromhex(sys.argv[1]), Gio.DBusCapabilityFlags.NONE)
            print(m.get_message_type().value_nick, m.get_serial(), m.get_destination(), m.get_path(), m.get_interface(), m.get_member(), m.get_signature())
            print(m.get_body().print_(True))
            """
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", script, hex], timeout: 30)
        XCTAssertTrue(r.succeeded, "\(r)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "method-call 7 org.freedesktop.Notifications /org/freedesktop/Notifications org.freedesktop.Notifications Notify susssasa{sv}i")
        XCTAssertEqual(lines.dropFirst().first,
                       "('favfs', uint32 0, 'drive-harddisk', 'favfs: conflict in a.txt', '/mnt/a.txt → a (conflict 2026-11-27 070000).txt', @as [], {'category': <'transfer.error'>, 'urgency': <byte 0x01>}, -1)")
    }

    /// And our decoder reads GLib's encoding of the same call.
    func testWeDecodeGLibsEncoding() throws {
        try requireBus()
        let script = """
            from gi.repository import Gio, GLib
            m = Gio.DBusMessage.new_method_call('org.freedesktop.Notifications', '/org/freedesktop/Notifications', 'org.freedesktop.Notifications', 'Notify')
            m.set_serial(7)
            m.set_body(GLib.Variant('(susssasa{sv}i)', ('favfs', 0, 'drive-harddisk', 'favfs: conflict in a.txt', '/mnt/a.txt → a (conflict 2026-11-27 070000).txt', [], {'category': GLib.Variant('s', 'transfer.error'), 'urgency': GLib.Variant('y', 1)}, -1)))
            print(m.to_blob(Gio.DBusCapabilityFlags.NONE).hex())
            """
        let r = try TimedProcess.run("/usr/bin/python3", ["-c", script], timeout: 30)
        XCTAssertTrue(r.succeeded, "\(r)")
        let hex = Array(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        let bytes = stride(from: 0, to: hex.count - 1, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
        var decoded = try DBusMessage.decode(bytes)
        XCTAssertEqual(decoded.signature, "susssasa{sv}i")
        // GLib's dictionary order is its own: compare the hints as a set.
        if case .array(let sig, let entries) = decoded.body[6] {
            decoded.body[6] = .array(elementSignature: sig, entries.sorted { "\($0)" < "\($1)" })
        }
        XCTAssertEqual(decoded, notifyMessage())
    }

    func testCallsOnARealBus() throws {
        try requireBus()
        for abstract in [false, true] {
            let bus = try PrivateSessionBus(abstract: abstract)
            defer { bus.stop() }
            XCTAssertTrue(bus.address.hasPrefix(abstract ? "unix:abstract=" : "unix:path="), bus.address)
            let c = try DBusConnection(address: bus.address)
            XCTAssertTrue(c.uniqueName?.hasPrefix(":") == true, "\(c.uniqueName ?? "no unique name")")
            let reply = try c.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                   interface: "org.freedesktop.Notifications", member: "Notify",
                                   body: DesktopNotifier.notifyArguments(Self.note))
            XCTAssertEqual(reply.kind, .methodReturn)
            XCTAssertEqual(reply.body, [.uint32(1)])
            let got = bus.waitForNotifications(1)
            XCTAssertEqual(got.count, 1)
            XCTAssertEqual(got.first?["summary"] as? String, Self.note.summary)
            XCTAssertEqual(got.first?["body"] as? String, Self.note.body)
            XCTAssertEqual(got.first?["app"] as? String, "favfs")
            XCTAssertEqual((got.first?["hints"] as? [String: String])?["urgency"], "1")
            // A method nobody has: an error reply, and the connection stays usable.
            XCTAssertThrowsError(try c.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                            interface: "org.freedesktop.Notifications", member: "NoSuchMethod")) {
                XCTAssertTrue($0 is DBusCallError, "\($0)")
            }
            XCTAssertTrue(c.isOpen)
            c.close()
        }
    }

    func testNoServerAndNoBus() throws {
        try requireBus()
        let bus = try PrivateSessionBus(notificationServer: false)
        defer { bus.stop() }
        let c = try DBusConnection(address: bus.address)
        XCTAssertThrowsError(try c.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                        interface: "org.freedesktop.Notifications", member: "Notify",
                                        body: DesktopNotifier.notifyArguments(Self.note))) {
            XCTAssertEqual(($0 as? DBusCallError)?.name, "org.freedesktop.DBus.Error.ServiceUnknown", "\($0)")
        }
        XCTAssertThrowsError(try DBusConnection(address: "unix:path=\(bus.directory.path)/nothing-here"))
        XCTAssertThrowsError(try DBusConnection(address: "tcp:host=localhost,port=1"))
        XCTAssertNil(DBusConnection.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": bus.directory.path + "/none"]))
        XCTAssertEqual(DBusConnection.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": bus.directory.path]),
                       "unix:path=\(bus.directory.path)/bus")
        // The notifier is silent either way: nothing thrown, nothing hangs.
        for env in [["DBUS_SESSION_BUS_ADDRESS": bus.address], [:]] {
            let n = DesktopNotifier(mountpoint: "/mnt", environment: env)
            n.notify(Self.note)
            n.drain()
            n.stop()
        }
    }

    /// Five at once are shown; the rest become one summary once the window has passed; a
    /// repeat of the same event within the minute is not shown.
    func testTheNotifierDoesNotFlood() throws {
        try requireBus()
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let n = DesktopNotifier(mountpoint: "/mnt/x", environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address],
                                limiter: NotificationLimiter(perKeyInterval: 60, burstLimit: 5, burstWindow: 1))
        for i in 0..<8 { n.notify(.init(key: "k\(i)", summary: "event \(i)", body: "b")) }
        n.notify(.init(key: "k0", summary: "event 0 again", body: "b"))
        let got = bus.waitForNotifications(6, timeout: 20)
        n.drain()
        usleep(500_000)
        let all = bus.notifications()
        XCTAssertEqual(all.compactMap { $0["summary"] as? String },
                       ["event 0", "event 1", "event 2", "event 3", "event 4", "favfs: 3 more events in /mnt/x"], "\(got)")
        n.stop()
    }

    /// A connection that died (the bus restarted) is made again for the next notification.
    func testTheNotifierReconnects() throws {
        try requireBus()
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let n = DesktopNotifier(mountpoint: "/mnt/x", environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { n.stop() }
        n.notify(.init(key: "1", summary: "before", body: "b"))
        n.drain()
        XCTAssertEqual(bus.waitForNotifications(1).count, 1)
        try bus.restart()
        n.notify(.init(key: "2", summary: "after", body: "b"))
        n.drain()
        XCTAssertEqual(bus.waitForNotifications(2).compactMap { $0["summary"] as? String }, ["before", "after"])
    }

    func testLimiter() {
        var l = NotificationLimiter()
        XCTAssertEqual(l.admit(key: "a", now: 0), .send)
        XCTAssertEqual(l.admit(key: "a", now: 30), .duplicate)
        XCTAssertEqual(l.admit(key: "a", now: 61), .send)
        for i in 0..<4 { XCTAssertEqual(l.admit(key: "b\(i)", now: 62), .send) }
        XCTAssertEqual(l.admit(key: "c", now: 63), .held(summaryAt: 71))
        XCTAssertEqual(l.admit(key: "d", now: 64), .held(summaryAt: 71))
        XCTAssertEqual(l.takeHeld(now: 71), 2)
        XCTAssertEqual(l.takeHeld(now: 72), 0)
        XCTAssertEqual(l.admit(key: "e", now: 80), .send)
    }
}
