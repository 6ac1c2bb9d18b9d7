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
    func testRandomOperationsMatchAModel() throws {
        try WriteBackChecks.randomOperations(try mount(), server, seed: 2026, steps: 2000)
    }
    func testUnsupportedOperationsAnswerTheirErrno() throws { try WriteBackChecks.unsupported(try mount(), symlinks: false) }
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
    func testRandomOperationsMatchAModel() throws {
        try WriteBackChecks.randomOperations(try mount(), server, seed: 7, steps: 2000)
    }
    func testUnsupportedOperationsAnswerTheirErrno() throws { try WriteBackChecks.unsupported(try mount(), symlinks: true) }
}
