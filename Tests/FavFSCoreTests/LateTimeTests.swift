@testable import FavFSCore
import Foundation
import Providers
import XCTest

/// rsync writes a temporary file, sets its time, and renames it: a time that could not be set
/// with the upload (a transient failure, or set while the upload was being recorded) is set
/// after it. Found by the rsync bench: set after the item counted as clean, it raced rsync's
/// rename — the rename did not wait, moved the file, and the time went to the old name (404),
/// so the next `rsync -a` sent the file again. Now it is set while the item still counts as
/// uploading, and a rename waits for it.
final class LateTimeTests: XCTestCase {
    func testATimeSetAfterTheUploadFollowsARenameThatCameRightAfter() async throws {
        let f = try LocalFixture()
        try f.write("t.tmp", Data("old\n".utf8))
        let d = try f.makeDomain()
        _ = try await d.children(of: .rootContainer)
        let id = ItemIdentifier("/t.tmp")
        let (h, _) = try await d.openFile(id, write: true, truncate: true)
        _ = try Data("rsync's temporary file\n".utf8).withUnsafeBytes { try d.write(handle: h, offset: 0, $0) }
        let time = Timestamp(seconds: 1_600_000_000, nanoseconds: 123_000_000)
        _ = try await d.setModified(id, time)   // dirty: kept for the upload
        let gate = Gate()
        f.provider.setModifiedHook = { _ in try await gate.pass() }
        d.closeFile(h)   // the upload starts; its time fails once, then waits at the gate
        let reached = await gate.waitForSecondCall(within: 20)
        XCTAssertTrue(reached, "the time was not set again after a transient failure")
        let renamed = Task { try await d.rename(.rootContainer, "t.tmp", to: .rootContainer, "t.bin", noReplace: false) }
        try await Task.sleep(nanoseconds: 300_000_000)
        gate.open()
        _ = try await renamed.value
        let attributes = try FileManager.default.attributesOfItem(atPath: f.served.appendingPathComponent("t.bin").path)
        let modified = try XCTUnwrap(attributes[.modificationDate] as? Date).timeIntervalSince1970
        XCTAssertEqual(modified, 1_600_000_000.123, accuracy: 0.001, "the time set before the rename did not reach the renamed file")
        XCTAssertEqual(try Data(contentsOf: f.served.appendingPathComponent("t.bin")), Data("rsync's temporary file\n".utf8))
        XCTAssertEqual(d.cachedItem(ItemIdentifier("/t.bin"))?.modifiedTime, time)
    }
}

/// The first call fails as a server in trouble would; the second waits until `open()`.
private final class Gate: @unchecked Sendable {
    private let lock = NSCondition()
    private var calls = 0
    private var isOpen = false

    func pass() async throws {
        let n = lock.withLock { calls += 1; lock.broadcast(); return calls }
        if n == 1 { throw ProviderError(.timedOut, detail: "the server did not answer (test)") }
        while !lock.withLock({ isOpen }) { try await Task.sleep(nanoseconds: 10_000_000) }
    }

    func waitForSecondCall(within seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if lock.withLock({ calls >= 2 }) { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return false
    }

    func open() { lock.withLock { isOpen = true } }
}
