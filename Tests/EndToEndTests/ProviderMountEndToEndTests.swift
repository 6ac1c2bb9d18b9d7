import Foundation
import Testing
import TestSupport

/// Every provider mounted through the real binary: a generated tree put on the server is read
/// back byte for byte through the mount, and (where the remote can be written) a tree copied
/// into the mount lands on the server byte for byte; a read-only remote refuses writes with EROFS.
@Suite(.serialized)
struct ProviderMountEndToEndTests {
    struct Target: Sendable, CustomStringConvertible {
        let server: any ConformanceServer
        var description: String { server.name }
    }
    static let targets = ConformanceServers.all.map(Target.init)

    /// A small tree of the shapes that matter: nesting, awkward names, an empty file, sizes
    /// around the 128 KiB chunk, a few MiB.
    static func tree(_ server: any ConformanceServer, root: String, seed: UInt64) -> (files: [String: Data], folders: [String]) {
        var rng = SeededRandom(seed: seed)
        func bytes(_ n: Int) -> Data {
            var b = [UInt8](repeating: 0, count: n)
            for i in 0..<n { b[i] = UInt8(truncatingIfNeeded: rng.next()) }
            return Data(b)
        }
        var files: [String: Data] = [:]
        var folders = ["\(root)/empty folder", "\(root)/a/b/c"]
        for (i, size) in [0, 1, 4095, 131_073, 3 * 1024 * 1024 + 5].enumerated() {
            files["\(root)/\(server.fileName("size \(i)"))"] = bytes(size)
        }
        for (i, name) in TreeGenerator.awkwardNames.enumerated() where server.traits.keeps(name: name) {
            files["\(root)/a/\(server.fileName(name))"] = bytes(100 + i)
            let folder = "\(root)/a/b/\(name.replacingOccurrences(of: ".", with: "_"))"
            folders.append(folder)
            files["\(folder)/\(server.fileName("in"))"] = bytes(10 + i)
        }
        files["\(root)/a/b/c/\(server.fileName("deep"))"] = bytes(70_000)
        return (files, folders)
    }

    static func mount(_ server: any ConformanceServer) throws -> MountedFavFS {
        try server.start()
        let remote = server.remote()
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        try m.mountOrThrow(extraArgs: ["--dir-cache-time", "0"], password: remote.secret)
        return m
    }

    @Test("a tree on the server reads back byte for byte through the mount", arguments: targets)
    func readsTree(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let root = "e2e-read-\(UUID().uuidString.prefix(6).lowercased())"
        let (files, folders) = Self.tree(t.server, root: root, seed: 42)
        try t.server.seed(files: files, folders: folders)
        let m = try Self.mount(t.server)
        defer { m.tearDown() }

        for (path, data) in files {
            let local = m.mountPoint.appendingPathComponent(path).path
            let got = Descriptors.contents(of: local)
            #expect(got == data, "\(path): \(got?.count ?? -1) bytes through the mount, \(data.count) on the server")
        }
        // Every folder lists exactly what the server has.
        var expected: [String: Set<String>] = [:]
        for path in Array(files.keys) + folders {
            var parts = path.split(separator: "/").map(String.init)
            while parts.count > 1 {
                let name = parts.removeLast()
                expected[parts.joined(separator: "/"), default: []].insert(name)
            }
        }
        for folder in folders where expected[folder] == nil { expected[folder] = [] }
        for (folder, names) in expected {
            let listed = Set((try? FileManager.default.contentsOfDirectory(atPath: m.mountPoint.appendingPathComponent(folder).path)) ?? [])
            #expect(listed == names, "\(folder) lists \(listed.sorted()), the server has \(names.sorted())")
        }
        let r = try m.unmount()
        #expect(r.succeeded, "unmount: \(r)")
    }

    @Test("a tree copied into the mount lands on the server byte for byte", arguments: targets)
    func writesTree(_ t: Target) throws {
        try E2EGate.requireFUSE()
        let root = "e2e-write-\(UUID().uuidString.prefix(6).lowercased())"
        let (files, folders) = Self.tree(t.server, root: "tree", seed: 7)
        try t.server.seed(files: [:], folders: [root])
        let m = try Self.mount(t.server)
        defer { m.tearDown() }

        let target = m.mountPoint.appendingPathComponent(root)
        guard t.server.traits.writable else {
            for cmd in ["touch \(shq(target.path))/new", "mkdir \(shq(target.path))/dir", "rm -rf \(shq(target.path))"] {
                let r = try TimedProcess.sh(cmd + " 2>&1")
                #expect(!r.succeeded && r.stdout.contains("Read-only file system"), "\(cmd): \(r)")
            }
            return
        }
        // Build the tree locally, then one `cp -r` into the mount, as a user would.
        let staging = URL(fileURLWithPath: "/tmp/favfs-e2e-staging-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: staging) }
        try DirectorySeeding.seed(staging, files: files, folders: folders)
        let cp = try TimedProcess.sh("cp -r \(shq(staging.path))/tree/. \(shq(target.path))/ 2>&1")
        #expect(cp.succeeded, "cp -r into the mount: \(cp)\ndaemon log:\n\(m.logProblems())")
        let r = try m.unmount()
        #expect(r.succeeded, "unmount (uploads drained): \(r)")
        for (path, data) in files {
            let remotePath = root + path.dropFirst("tree".count)
            let got = try t.server.contents(of: remotePath)
            #expect(got == data, "\(remotePath) on the server: \(got?.count ?? -1) bytes, wrote \(data.count)")
        }
        for folder in folders {
            #expect(try t.server.exists(root + folder.dropFirst("tree".count)), "folder \(folder) is not on the server")
        }
    }
}
