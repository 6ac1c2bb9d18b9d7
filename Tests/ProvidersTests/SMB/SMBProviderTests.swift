import Foundation
import XCTest
import Curl
import FavFSCore
@testable import Providers
import TestSupport

/// What the SMB provider does beyond the conformance suite, against a real Samba smbd: calls
/// from many tasks at once (libsmbclient is not safe to use from two threads), names that SMB
/// compares without case or cannot store, `df`, a server that hangs, one that restarts.
final class SMBProviderTests: XCTestCase {
    private var server: SambaConformanceServer { SambaConformanceServer.shared }

    private func provider(_ remote: ConformanceRemote? = nil, transport: TransportOptions = TransportOptions()) throws -> any WritableProvider {
        try server.start()
        let r = remote ?? server.remote()
        let p = try ProviderFactory.make(RemoteConfiguration(url: RemoteURL(r.url), secret: r.secret), transport: transport)
        return try XCTUnwrap(p as? any WritableProvider)
    }

    private func area() -> String { "smb-\(UUID().uuidString.prefix(8).lowercased())" }

    /// Several remotes in one process, each called from many tasks at once: every answer is
    /// right and nothing crashes (four threads with a context each corrupt libsmbclient's heap
    /// within seconds).
    func testCallsFromManyTasksOnSeveralRemotesAtOnce() async throws {
        let a = area()
        var files: [String: Data] = [:]
        for i in 0..<20 { files["\(a)/f\(i).bin"] = Data((0..<(1000 + i * 97)).map { UInt8(truncatingIfNeeded: $0 * 7 + i) }) }
        try server.seed(files: files, folders: [])
        let seeded = files
        let providers = try (0..<3).map { _ in try provider() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<60 {
                let p = providers[round % providers.count]
                let path = "\(a)/f\(round % 20).bin"
                group.addTask {
                    let item = try await p.item(for: ItemIdentifier("/" + path))
                    let got = try await Conformance.read(p, item, 0..<item.size)
                    XCTAssertEqual(got, seeded[path], path)
                    let listed = try await p.enumerateAll(in: ItemIdentifier("/" + a))
                    XCTAssertEqual(listed.count, 20)
                }
            }
            try await group.waitForAll()
        }
    }

    /// Calls waiting for a remote's one SMB thread run the most urgent task's first (a
    /// program's read before a background listing), in order within a priority.
    func testWaitingCallsRunMostUrgentFirst() async throws {
        let connections = SMBConnections(settings: SMBSettings(domain: nil, user: "u", password: "p", port: nil, timeoutMilliseconds: 1000),
                                         remote: "smb://test/share")
        let gate = DispatchSemaphore(value: 0)
        let order = LockedOrder()
        let blocker = Task { try await connections.run { _ in order.append("blocker"); gate.wait() } }
        while order.names.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }  // the blocker holds the thread
        var calls: [Task<Void, Error>] = []
        for (name, priority) in [("background 1", TaskPriority.utility), ("background 2", .utility), ("read", .high)] {
            calls.append(Task(priority: priority) { try await connections.run { _ in order.append(name) } })
            while connections.waiting < calls.count { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        gate.signal()
        try await blocker.value
        for c in calls { try await c.value }
        XCTAssertEqual(order.names, ["blocker", "read", "background 1", "background 2"])
    }

    /// Samba compares names without case: a new `A.TXT` beside `a.txt` must not replace it.
    func testANewNameThatDiffersOnlyInCaseReplacesNothing() async throws {
        let a = area()
        try server.seed(files: ["\(a)/a.txt": Data("original\n".utf8)], folders: [])
        let p = try provider()
        let (fd, path) = try temporaryFile(Data("other\n".utf8))
        defer { close(fd); unlink(path) }
        do {
            _ = try await p.upload(ItemIdentifier("/\(a)/A.TXT"), from: ContentSource(fd: fd, length: 6), precondition: .mustNotExist)
            XCTFail("an upload of A.TXT beside a.txt was accepted")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .exists, "\(error)")
        }
        XCTAssertEqual(try server.contents(of: "\(a)/a.txt"), Data("original\n".utf8))
        let names = try FileManager.default.contentsOfDirectory(atPath: try server.servedFolder().appendingPathComponent(a).path)
        XCTAssertEqual(names, ["a.txt"], "a temporary upload file was left behind")
    }

    /// Two mounts replacing one file take turns through a claim file beside it: while another
    /// client's claim is there, an upload waits (`.locked`, retried by the core) and changes
    /// nothing; a claim this host's dead process left, or one older than `staleAfter`, is taken
    /// over; none is left behind.
    func testAnUploadWaitsForAnotherClientsClaimAndTakesOverADeadOne() async throws {
        let a = area()
        try server.seed(files: ["\(a)/f.txt": Data("base\n".utf8)], folders: [])
        let p = try provider()
        let folder = try server.servedFolder().appendingPathComponent(a)
        let claim = folder.appendingPathComponent(SMBClaim.fileName(for: "f.txt"))
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        let thisHost = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for (owner, age, taken) in [("otherhost 12", 0.0, false), ("\(thisHost) 4000000", 0.0, true), ("otherhost 12", 600.0, true)] {
            let id = ItemIdentifier("/\(a)/f.txt")
            let current = try await p.item(for: id)
            let base = try XCTUnwrap(current.version)
            try Data(owner.utf8).write(to: claim)
            let then = Date().addingTimeInterval(-age)
            try FileManager.default.setAttributes([.modificationDate: then], ofItemAtPath: claim.path)
            let new = Data("by \(owner) \(age)\n".utf8)
            let (fd, path) = try temporaryFile(new)
            defer { close(fd); unlink(path) }
            do {
                _ = try await p.upload(id, from: ContentSource(fd: fd, length: Int64(new.count)), precondition: .mustMatch(base))
                XCTAssertTrue(taken, "the upload went ahead under the live claim of \(owner)")
                XCTAssertEqual(try server.contents(of: "\(a)/f.txt"), new)
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["f.txt"], "a claim or temporary file was left")
            } catch let error as ProviderError {
                XCTAssertFalse(taken, "the claim of \(owner), \(age) s old, was not taken over: \(error)")
                XCTAssertEqual(error.kind, .locked, "\(error)")
                XCTAssertTrue(error.isTransient)
                XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)), ["f.txt", claim.lastPathComponent])
                try FileManager.default.removeItem(at: claim)
            }
        }
    }

    /// A name SMB cannot store is refused when it is made, before anything is sent.
    func testNamesSMBCannotStoreAreRefusedAtCreate() async throws {
        let p = try provider()
        for name in ["co:lon", "what?", "a|b", "tab\there", "back\\slash", "star*"] {
            let problem = p.storageProblem(ItemIdentifier("/\(name)"), kind: .file)
            XCTAssertEqual(problem?.kind, .invalidName, name.debugDescription)
            XCTAssertTrue(problem?.detail.contains("SMB does not allow") ?? false, "\(String(describing: problem))")
        }
        XCTAssertNil(p.storageProblem(ItemIdentifier("/ünïcödé ☃ #100% a+b;c"), kind: .file))
        do {
            _ = try await p.createFolder(ItemIdentifier("/\(area())-co:lon"))
            XCTFail("a folder named with ':' was made")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .invalidName)
        }
    }

    /// `df` on the mount is the share's file system: libsmbclient's statvfs counts allocation
    /// units of (bytes per sector × sectors per unit), which must be multiplied back.
    func testQuotaIsTheSharesFileSystem() async throws {
        let p = try provider()
        let answer = try await p.quota()
        let quota = try XCTUnwrap(answer)
        var s = statvfs()
        XCTAssertEqual(statvfs(try server.servedFolder().path, &s), 0)
        let total = Int64(s.f_blocks) * Int64(s.f_frsize)
        let reported = try XCTUnwrap(quota.totalBytes)
        XCTAssertLessThan(abs(Double(reported - total)) / Double(total), 0.01, "share total \(reported) vs the folder's file system \(total)")
    }

    /// A server that takes the connection and never answers: the call fails with a timeout
    /// within the transport's limits, and says so.
    func testAServerThatNeverAnswersTimesOut() async throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        XCTAssertTrue(bound)
        XCTAssertEqual(listen(fd, 16), 0)   // connections complete in the backlog; nothing is read
        let port = Int(UInt16(bigEndian: addr.sin_port))
        var transport = TransportOptions()
        transport.connectTimeout = 2
        transport.lowSpeedTime = 2
        let p = try provider(ConformanceRemote(url: "smb://favfs@127.0.0.1:\(port)/files", secret: "x"), transport: transport)
        let started = Date()
        do {
            _ = try await p.item(for: ItemIdentifier("/x"))
            XCTFail("a server that never answers answered")
        } catch let error as ProviderError {
            XCTAssertTrue([.timedOut, .unreachable].contains(error.kind), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the timeout is 2 s")
    }

    /// The server restarts between two calls: the second reconnects.
    func testARestartedServerIsReachedAgain() async throws {
        let s = try SambaServer()
        defer { s.remove() }
        try s.start()
        try Data("x\n".utf8).write(to: s.share.appendingPathComponent("x.txt"))
        let remote = ConformanceRemote(url: "smb://\(s.user)@127.0.0.1:\(s.port)/files", secret: s.password)
        let p = try provider(remote)
        let before = try await p.item(for: ItemIdentifier("/x.txt"))
        XCTAssertEqual(before.size, 2)
        s.stop()
        try s.start()
        let after = try await p.item(for: ItemIdentifier("/x.txt"))
        XCTAssertEqual(after.version, before.version)
        // A wrong password says what to check.
        let wrong = try provider(ConformanceRemote(url: remote.url, secret: "wrong"))
        do {
            _ = try await wrong.item(for: ItemIdentifier("/x.txt"))
            XCTFail("a wrong password was accepted")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .denied)
            XCTAssertTrue(error.detail.contains("password"), error.detail)
        }
    }

    /// A copy at the server: byte for byte, never over an existing name (compared without case).
    func testServerSideCopyNeverReplacesAName() async throws {
        let a = area()
        let data = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try server.seed(files: ["\(a)/src.bin": data, "\(a)/taken.bin": Data("theirs\n".utf8)], folders: ["\(a)/sub"])
        let p = try XCTUnwrap(try provider() as? any ServerSideCopyProvider)
        let src = try await p.item(for: ItemIdentifier("/\(a)/src.bin"))
        let copy = try await p.copyItem(src, to: ItemIdentifier("/\(a)/sub/copy.bin"))
        XCTAssertEqual(copy.size, Int64(data.count))
        XCTAssertEqual(try server.contents(of: "\(a)/sub/copy.bin"), data)
        for name in ["taken.bin", "TAKEN.BIN"] {
            do {
                _ = try await p.copyItem(src, to: ItemIdentifier("/\(a)/\(name)"))
                XCTFail("a copy over \(name) was made")
            } catch let error as ProviderError {
                XCTAssertEqual(error.kind, .exists, "\(error)")
            }
        }
        XCTAssertEqual(try server.contents(of: "\(a)/taken.bin"), Data("theirs\n".utf8))
        let left = try FileManager.default.contentsOfDirectory(atPath: try server.servedFolder().appendingPathComponent(a).path).sorted()
        XCTAssertEqual(left, ["src.bin", "sub", "taken.bin"], "a temporary file was left behind")
    }

    /// `mv dir empty-dir` replaces the empty folder, as rename(2) does (libsmbclient alone
    /// answers EEXIST); a file replaces a file.
    func testMovesReplaceAnEmptyFolderAndAFile() async throws {
        let a = area()
        try server.seed(files: ["\(a)/src/inside.txt": Data("in\n".utf8), "\(a)/f.txt": Data("new\n".utf8),
                                "\(a)/g.txt": Data("old\n".utf8)], folders: ["\(a)/empty"])
        let p = try provider()
        let src = try await p.item(for: ItemIdentifier("/\(a)/src"))
        let moved = try await p.move(src, to: ItemIdentifier("/\(a)/empty"), replacing: true)
        XCTAssertEqual(moved.kind, .folder)
        XCTAssertEqual(try server.contents(of: "\(a)/empty/inside.txt"), Data("in\n".utf8))
        XCTAssertFalse(try server.exists("\(a)/src"))
        let f = try await p.item(for: ItemIdentifier("/\(a)/f.txt"))
        do {
            _ = try await p.move(f, to: ItemIdentifier("/\(a)/g.txt"), replacing: false)
            XCTFail("a move over g.txt without replacing was made")
        } catch let error as ProviderError {
            XCTAssertEqual(error.kind, .exists)
        }
        _ = try await p.move(f, to: ItemIdentifier("/\(a)/g.txt"), replacing: true)
        XCTAssertEqual(try server.contents(of: "\(a)/g.txt"), Data("new\n".utf8))
    }

    func testURLsWithoutAShareOrPasswordAreRefusedWithTheReason() throws {
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("smb://nas.local/"), secret: "p"))) { error in
            XCTAssertTrue("\(error)".contains("name a share"), "\(error)")
        }
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("smb://nas.local/files")))) { error in
            XCTAssertTrue("\(error)".contains("no password"), "\(error)")
        }
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("smb://nas.local/files?workgroup=X"), secret: "p"))) { error in
            XCTAssertTrue("\(error)".contains("unknown option 'workgroup'"), "\(error)")
        }
        let p = try ProviderFactory.make(RemoteConfiguration(url: RemoteURL("smb://me@nas.local/files/Photos%202026?domain=HOME"), secret: "p"))
        XCTAssertEqual(p.remoteDescription, "smb://me@nas.local/files/Photos%202026")
        let smb = try XCTUnwrap(p as? SMBProvider)
        XCTAssertEqual(smb.paths.url(ItemIdentifier("/a b/what's 100%.txt")), "smb://nas.local/files/Photos%202026/a%20b/what%27s%20100%25.txt")
    }

    private func temporaryFile(_ data: Data) throws -> (Int32, String) {
        let path = NSTemporaryDirectory() + "favfs-smb-\(UUID().uuidString)"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ShellError("open \(path)") }
        return (fd, path)
    }
}

private final class LockedOrder: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ name: String) { lock.withLock { list.append(name) } }
    var names: [String] { lock.withLock { list } }
}
