import Foundation
import TestSupport
import XCTest

/// Desktop notifications from a real mount to a real session bus (a private dbus-daemon with
/// the notification server of Tests/Fixtures/notification_server.py): a conflict copy and a
/// refused upload are each told once; `--no-notifications` tells nothing; with no bus at all
/// the mount works and says so in one debug line only.
final class DesktopNotificationsEndToEndTests: XCTestCase {
    func requireBus() throws {
        guard PrivateSessionBus.isAvailable else {
            if TestEnvironment.isCI { throw ShellError("CI=true and these tests need dbus-daemon and python3-gi") }
            throw XCTSkip("needs /usr/bin/dbus-daemon and python3-gi")
        }
    }

    /// Mounts a local folder, then makes a conflict: another writer creates `taken.txt` at the
    /// server after the mount listed the folder, and the mount writes its own `taken.txt`.
    /// Returns once the conflict copy is at the server.
    /// `helperOptions`: mount in the mount helper's form (`favfs URL MOUNTPOINT -o …`) instead.
    func makeConflict(extraArgs: [String] = [], helperOptions: String? = nil,
                      environment: [String: String?]) throws -> (MountedFavFS, served: URL) {
        let served = URL(fileURLWithPath: "/tmp/favfs-notify-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        let mounted = try MountedFavFS(remote: "file://" + served.path)
        if let helperOptions {
            let r = try TimedProcess.run(FavFSBinary.path, ["file://" + served.path, mounted.path, "-o",
                                                            "\(helperOptions),poll_interval=0,cache_dir=\(mounted.cacheDir.path)"],
                                         timeout: 90, environment: environment)
            guard r.succeeded, mounted.isMounted else { throw ShellError("mount helper form failed: \(r)") }
        } else {
            try mounted.mountOrThrow(extraArgs: ["--poll-interval", "0"] + extraArgs, environment: environment)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mounted.path), [])
        try Data("the other writer's\n".utf8).write(to: served.appendingPathComponent("taken.txt"))
        try Data("mine\n".utf8).write(to: URL(fileURLWithPath: mounted.path + "/taken.txt"))
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if ((try? FileManager.default.contentsOfDirectory(atPath: served.path)) ?? []).contains(where: { $0.hasPrefix("taken (conflict ") }) {
                return (mounted, served)
            }
            usleep(100_000)
        }
        XCTFail("no conflict copy at the server: \(mounted.logProblems())")
        return (mounted, served)
    }

    func testAConflictIsToldOnce() throws {
        try E2EGate.require(apache: false)
        try requireBus()
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let (m, served) = try makeConflict(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { m.tearDown(); try? FileManager.default.removeItem(at: served) }
        _ = bus.waitForNotifications(1, timeout: 20)
        sleep(2)  // a second one would come now
        let got = bus.notifications()
        XCTAssertEqual(got.count, 1, "\(got)")
        let copy = try FileManager.default.contentsOfDirectory(atPath: served.path).first { $0.hasPrefix("taken (conflict ") } ?? "?"
        XCTAssertEqual(got.first?["summary"] as? String, "favfs: conflict in taken.txt")
        let body = got.first?["body"] as? String ?? ""
        XCTAssertTrue(body.contains(m.path + "/taken.txt") && body.contains(copy), body)
        XCTAssertEqual((got.first?["hints"] as? [String: String])?["category"], "transfer.error")
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(bus.notifications().count, 1, "\(bus.notifications())")
    }

    func testARefusedUploadIsToldOnce() throws {
        try E2EGate.require(apache: true)
        try requireBus()
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let apache = try ApacheServer.refusingLargeUploads()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--fsync", "remote"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let fd = open(m.path + "/small/big.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let payload = [UInt8](repeating: 7, count: 5000)
        XCTAssertEqual(write(fd, payload, payload.count), payload.count)
        XCTAssertEqual(fsync(fd), -1, "fsync should report the refusal")
        close(fd)
        _ = bus.waitForNotifications(1, timeout: 20)
        sleep(2)
        let got = bus.notifications()
        XCTAssertEqual(got.count, 1, "\(got)")
        XCTAssertEqual(got.first?["summary"] as? String, "favfs: upload refused: big.bin")
        let body = got.first?["body"] as? String ?? ""
        XCTAssertTrue(body.contains(m.path + "/small/big.bin") && body.contains(m.cacheDir.path + "/lost+found/") && body.contains("413"), body)
    }

    /// The server goes away and comes back: one notification each way, however many polls
    /// fail in between.
    func testTheRemoteOfflineAndBackIsToldOnceEach() throws {
        try E2EGate.require(apache: true)
        try requireBus()
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let apache = try ApacheServer()
        try apache.write(["a.txt": Data("a\n".utf8)])
        try apache.start()
        defer { apache.remove() }
        let m = try MountedFavFS(remote: apache.davURL)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "1", "--dir-cache-time", "1", "--timeout", "5"],
                           environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m.path), ["a.txt"])
        apache.stop()
        let offline = bus.waitForNotifications(1, timeout: 30)
        XCTAssertEqual(offline.first?["summary"] as? String, "favfs: \(apache.davURL) is offline",
                       "\(offline) \(m.logProblems())")
        sleep(8)  // polls keep failing: no more notifications
        XCTAssertEqual(bus.notifications().count, 1, "\(bus.notifications())")
        try apache.start()
        let back = bus.waitForNotifications(2, timeout: 30)
        XCTAssertEqual(back.count, 2, "\(back) \(m.logProblems())")
        XCTAssertTrue((back.last?["summary"] as? String)?.hasSuffix(" is back online") == true, "\(back)")
        sleep(3)
        XCTAssertEqual(bus.notifications().count, 2, "\(bus.notifications())")
    }

    func testNoNotificationsWithTheOption() throws {
        try E2EGate.require(apache: false)
        try requireBus()
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        for helper in [false, true] {
            let (m, served) = helper
                ? try makeConflict(helperOptions: "no_notifications", environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
                : try makeConflict(extraArgs: ["--no-notifications"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
            defer { m.tearDown(); try? FileManager.default.removeItem(at: served) }
            sleep(3)
            XCTAssertTrue(try m.unmount().succeeded)
            XCTAssertEqual(bus.notifications().count, 0, "helper form: \(helper): \(bus.notifications())")
        }
    }

    /// No session bus: the mount works, and the log has one debug line about it, nothing louder.
    func testNoBusIsSilent() throws {
        try E2EGate.require(apache: false)
        let (m, served) = try makeConflict(extraArgs: ["--log-level", "debug"],
                                           environment: ["DBUS_SESSION_BUS_ADDRESS": nil, "XDG_RUNTIME_DIR": "/nonexistent-favfs-test"])
        defer { m.tearDown(); try? FileManager.default.removeItem(at: served) }
        XCTAssertTrue(m.isMounted)
        XCTAssertEqual(try String(contentsOf: URL(fileURLWithPath: m.path + "/taken.txt"), encoding: .utf8), "the other writer's\n")
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: served.path).contains { $0.hasPrefix("taken (conflict ") })
        let log = (try? String(contentsOf: m.cacheDir.appendingPathComponent("favfs.log"), encoding: .utf8)) ?? ""
        let lines = log.split(separator: "\n").filter { $0.contains("favfs.notifications") || $0.lowercased().contains("d-bus") || $0.contains("session bus") }
        XCTAssertEqual(lines.count, 1, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.first?.contains(" debug ") == true && lines.first?.contains("no session bus") == true, lines.joined(separator: "\n"))
    }
}
