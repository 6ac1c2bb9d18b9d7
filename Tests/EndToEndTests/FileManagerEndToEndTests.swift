import Foundation
import Testing
import TestSupport

/// A real file manager, as a user has it open: Thunar shows a folder of a mount (on a private
/// X server, its window read through the accessibility bus), and a rename made at the server
/// appears in that window by itself — no key pressed, no F5. On a read-only mount, where the
/// kernel refuses the echo, the window keeps the old name although `ls` has the new one: that
/// half shows the test can see a window that did not update.
@Suite(.serialized)
struct FileManagerEndToEndTests {
    @Test("Thunar shows a rename made at the server without a key press", arguments: [false, true])
    func thunarUpdatesByItself(readOnly: Bool) throws {
        try E2EGate.requireFUSE()
        for tool in ["/usr/bin/thunar", "/usr/bin/Xvfb", "/usr/bin/dbus-run-session"] where !FileManager.default.isExecutableFile(atPath: tool) {
            if TestEnvironment.isCI { Issue.record("\(tool) is not installed (make setup installs it)") }
            return
        }
        let s = LocalConformanceServer.shared
        let root = "thunar-\(UUID().uuidString.prefix(6).lowercased())"
        try s.start()
        try s.seed(files: ["\(root)/notes.txt": Data("notes\n".utf8), "\(root)/report.txt": Data("report\n".utf8)], folders: [])
        let m = try MountedFavFS(remote: s.remote().urlWithOptions)
        defer { m.tearDown() }
        try m.mountOrThrow(extraArgs: ["--poll-interval", "3600"] + (readOnly ? ["--read-only"] : []))
        let dir = m.path + "/" + root
        let config = m.base.appendingPathComponent("xdg-config-\(readOnly)")
        let thunar = try BackgroundProcess("/usr/bin/env", ["XDG_CONFIG_HOME=\(config.path)", "/usr/bin/dbus-run-session", "--",
                                                           "/usr/bin/python3", ChangeDetectionEndToEndTests.fixture("thunar_watch.py"), dir],
                                           logFile: m.base.appendingPathComponent("thunar-\(readOnly).log"))
        defer { thunar.stop() }
        let shows = { (name: String) in thunar.log().split(separator: "\n").last { $0.hasPrefix("cells ") }?
            .dropFirst("cells ".count).split(separator: "|").contains(Substring(name)) ?? false }
        #expect(waitUntil(60) { shows("notes.txt") && shows("report.txt") }, "Thunar did not show the folder: \(thunar.log())")

        try FileManager.default.moveItem(at: s.root.appendingPathComponent("\(root)/report.txt"),
                                         to: s.root.appendingPathComponent("\(root)/report-final.txt"))
        #expect(waitUntil(15) { (try? FileManager.default.contentsOfDirectory(atPath: dir))?.contains("report-final.txt") == true },
                "the mount did not list the new name: \(m.logTail())")
        if readOnly {
            Thread.sleep(forTimeInterval: 3)
            #expect(shows("report.txt") && !shows("report-final.txt"), "a read-only mount's window changed by itself: \(thunar.log())")
        } else {
            #expect(waitUntil(15) { shows("report-final.txt") && !shows("report.txt") },
                    "Thunar's window still shows the old name: \(thunar.log()) — \(m.logTail())")
        }
        thunar.stop()
        let unmounted = try m.unmount()
        #expect(unmounted.succeeded, "favfs unmount: \(unmounted) — \(m.logProblems())")
    }
}
