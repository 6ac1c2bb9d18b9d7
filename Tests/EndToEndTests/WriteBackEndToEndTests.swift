import Foundation
import TestSupport
import XCTest

/// Write-back through the real binary against Apache mod_dav.
final class WebDAVWriteBackEndToEndTests: XCTestCase {
    nonisolated(unsafe) static var apache: ApacheServer?
    var scratch: URL!
    var mounts: [MountedFavFS] = []

    override class func setUp() {
        super.setUp()
        guard ApacheServer.isAvailable, let s = try? ApacheServer() else { return }
        do { try s.start(); apache = s } catch { s.remove() }
    }

    override class func tearDown() {
        apache?.remove()
        apache = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        try E2EGate.require(apache: true)
        guard Self.apache != nil else { throw ShellError("Apache mod_dav did not start") }
        scratch = URL(fileURLWithPath: "/tmp/favfs-wb-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        super.tearDown()
    }

    private var server: ServerSide {
        let s = Self.apache!
        return ServerSide(root: s.documentRoot.path, fixOwnership: { try s.fixOwnership() })
    }

    private func mount() throws -> MountedFavFS {
        let m = try MountedFavFS(remote: Self.apache!.davURL)
        mounts.append(m)
        return m
    }

    func testCopyATreeIn() throws { try WriteBackChecks.copyTreeIn(try mount(), server, scratch: scratch) }
    func testSaveByRename() throws { try WriteBackChecks.saveByRename(try mount(), server) }
    func testFolderRenameAndRecursiveRemove() throws { try WriteBackChecks.renameAndRemove(try mount(), server) }
    func testTruncate() throws { try WriteBackChecks.truncate(try mount(), server) }
    func testKill9BeforeUploadThenRemountFinishesIt() throws {
        try WriteBackChecks.killDuringUpload(remote: Self.apache!.davURL, server, scratch: scratch)
    }
    func testConflictKeepsTheRemoteAndSavesALocalCopy() throws { try WriteBackChecks.conflict(try mount(), server) }
    func testWritesAfterAConflictCopyGoToTheCopy() throws { try WriteBackChecks.writesAfterAConflictCopy(try mount(), server) }
    func testAWriteBehindANewerOpenFailsWithESTALE() throws { try WriteBackChecks.writeBehindANewerOpen(try mount(), server) }
    func testAWriteAfterARemoteDeleteBecomesAConflictCopy() throws { try WriteBackChecks.writeAfterARemoteDelete(try mount(), server) }
    func testRandomOperationsMatchAModel() throws {
        try WriteBackChecks.randomOperations(try mount(), server, seed: 2026, steps: 2000)
    }
    func testUnsupportedOperationsAnswerTheirErrno() throws { try WriteBackChecks.unsupported(try mount(), symlinks: false) }

    /// The server is down when the file is closed: the upload waits (status says so) and is
    /// retried with backoff until the server is back.
    func testUploadIsRetriedUntilTheServerIsBack() throws {
        let m = try mount()
        try m.mountOrThrow()
        let apache = Self.apache!
        XCTAssertTrue(try TimedProcess.sh("mkdir \(shq(m.path + "/retry"))").succeeded)
        apache.stop()
        defer { if !apache.isRunning { try? apache.start() } }
        XCTAssertTrue(try TimedProcess.sh("printf 'written while the server was down' > \(shq(m.path + "/retry/f.txt"))").succeeded)
        sleep(2) // a few failed attempts
        let status = try TimedProcess.run(FavFSBinary.path, ["status", m.path + "/retry/f.txt"], timeout: 30)
        XCTAssertTrue(status.stdout.hasPrefix("dirty"), "status: \(status)")
        try apache.start()
        XCTAssertTrue(server.waitFor("retry/f.txt", Data("written while the server was down".utf8), timeout: 60),
                      "the upload was not retried once the server was back")
        try WriteBackChecks.unmountOrFail(m)
    }
}

/// The same cases against the local provider (file://).
final class LocalWriteBackEndToEndTests: XCTestCase {
    var scratch: URL!
    var served: URL!
    var mounts: [MountedFavFS] = []

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
        scratch = URL(fileURLWithPath: "/tmp/favfs-wb-\(UUID().uuidString.prefix(8))")
        served = scratch.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        super.tearDown()
    }

    private var server: ServerSide { ServerSide(root: served.path, fixOwnership: {}) }
    private var remote: String { "file://" + served.path }

    private func mount() throws -> MountedFavFS {
        let m = try MountedFavFS(remote: remote)
        mounts.append(m)
        return m
    }

    func testCopyATreeIn() throws { try WriteBackChecks.copyTreeIn(try mount(), server, scratch: scratch) }
    func testSaveByRename() throws { try WriteBackChecks.saveByRename(try mount(), server) }
    func testFolderRenameAndRecursiveRemove() throws { try WriteBackChecks.renameAndRemove(try mount(), server) }
    func testTruncate() throws { try WriteBackChecks.truncate(try mount(), server) }
    func testKill9BeforeUploadThenRemountFinishesIt() throws {
        try WriteBackChecks.killDuringUpload(remote: remote, server, scratch: scratch)
    }
    func testConflictKeepsTheRemoteAndSavesALocalCopy() throws { try WriteBackChecks.conflict(try mount(), server) }
    func testWritesAfterAConflictCopyGoToTheCopy() throws { try WriteBackChecks.writesAfterAConflictCopy(try mount(), server) }
    func testAWriteBehindANewerOpenFailsWithESTALE() throws { try WriteBackChecks.writeBehindANewerOpen(try mount(), server) }
    func testAWriteAfterARemoteDeleteBecomesAConflictCopy() throws { try WriteBackChecks.writeAfterARemoteDelete(try mount(), server) }
    func testRandomOperationsMatchAModel() throws {
        try WriteBackChecks.randomOperations(try mount(), server, seed: 7, steps: 2000)
    }
    func testUnsupportedOperationsAnswerTheirErrno() throws { try WriteBackChecks.unsupported(try mount(), symlinks: true) }
}
