import Foundation
import TestSupport
import XCTest

/// The same core cases against the local folder provider (`file:///…`).
final class LocalEndToEndTests: XCTestCase {
    nonisolated(unsafe) static var treeRoot: URL?
    nonisolated(unsafe) static var setupError: Error?
    var mounts: [MountedFavFS] = []

    static func sharedTree() throws -> URL {
        if let setupError { throw setupError }
        if let treeRoot { return treeRoot }
        do {
            let base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-local-\(UUID().uuidString.prefix(8))")
            let tree = base.appendingPathComponent("tree")
            try TreeGenerator().write(into: tree)
            treeRoot = tree
            return tree
        } catch {
            setupError = error
            throw error
        }
    }

    override class func tearDown() {
        if let treeRoot { try? FileManager.default.removeItem(at: treeRoot.deletingLastPathComponent()) }
        treeRoot = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        try E2EGate.require(apache: false)
    }

    override func tearDown() {
        for m in mounts { m.tearDown() }
        mounts = []
        super.tearDown()
    }

    func makeMount() throws -> (MountedFavFS, URL) {
        let tree = try Self.sharedTree()
        let m = try MountedFavFS(remote: "file://" + tree.path)
        mounts.append(m)
        return (m, tree)
    }

    func testFullTreeMatchesFolder() throws {
        let (m, tree) = try makeMount()
        try m.mountOrThrow()
        try SharedChecks.treeEquality(mount: m.path, server: tree.path)
    }

    func testRandomOffsetReads() throws {
        let (m, tree) = try makeMount()
        try m.mountOrThrow()
        try SharedChecks.randomOffsetReads(mount: m.path, server: tree.path)
    }

    func testUnmountEvictsContent() throws {
        let (m, _) = try makeMount()
        try SharedChecks.unmountEvicts(m)
    }

    func testUnmountKeepCacheKeepsContent() throws {
        let (m, _) = try makeMount()
        try SharedChecks.unmountKeepCacheKeeps(m)
    }

    func testReadOnly() throws {
        let (m, tree) = try makeMount()
        try m.mountOrThrow(extraArgs: ["--read-only"])
        try SharedChecks.readOnly(mount: m.path, server: tree.path)
    }

    func testCacheSizeLimit() throws {
        let (m, tree) = try makeMount()
        try SharedChecks.cacheSizeLimit(m, server: tree.path)
    }

    func testRemoteChangesAppear() throws {
        let (m, tree) = try makeMount()
        try SharedChecks.remoteChangesAppear(m, server: tree.path)
    }

    func testForeground() throws {
        let (m, _) = try makeMount()
        try SharedChecks.foreground(m)
    }
}
