import Foundation
import TestSupport
import XCTest

/// Tests run in parallel, and a program one test starts must not inherit a descriptor another
/// test holds open in its mount (the mount then stays busy and its unmount fails with EBUSY,
/// as a CI run once saw). Descriptors opened without close-on-exec, as `FileManager.contents`
/// opens them, are the case.
final class SpawnedDescriptorsTests: XCTestCase {
    func testASpawnedProgramInheritsOnlyItsStandardDescriptors() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spawned-fd-\(UUID().uuidString)")
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fd = open(file.path, O_RDONLY)   // no O_CLOEXEC
        XCTAssertGreaterThanOrEqual(fd, 3)
        defer { close(fd) }
        // `ls` lists /proc/self/fd through one descriptor of its own; nothing else beyond 0-2.
        let listed = try Shell.run("/bin/sh", ["-c", "ls -l /proc/$$/fd"])
        XCTAssertFalse(listed.output.contains(file.path), "a child of the test process inherited \(file.path):\n\(listed.output)")
        let timed = try TimedProcess.run("/bin/sh", ["-c", "ls -l /proc/$$/fd"], timeout: 30)
        XCTAssertFalse(timed.stdout.contains(file.path), "a child of the test process inherited \(file.path):\n\(timed.stdout)")
        XCTAssertEqual(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0, "the parent's descriptor was changed, not closed in the child")
    }
}
