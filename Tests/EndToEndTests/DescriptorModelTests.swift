import Foundation
import TestSupport
import XCTest

/// `DescriptorModel` through the binary under test, against Apache mod_dav and a local folder:
/// several seeds of several thousand steps each, then the server compared with the model after
/// unmount. `FAVFS_MODEL_SEED` and `FAVFS_MODEL_STEPS` replay one seed.
final class DescriptorModelTests: ScratchMountTestCase {
    override class var needsApache: Bool { true }
    override class var scratchPrefix: String { "favfs-model" }

    private var seeds: [UInt64] {
        if let s = ProcessInfo.processInfo.environment["FAVFS_MODEL_SEED"].flatMap({ UInt64($0) }) { return [s] }
        return [11, 12, 13, 14, 15]
    }
    private var steps: Int { ProcessInfo.processInfo.environment["FAVFS_MODEL_STEPS"].flatMap { Int($0) } ?? 5000 }

    func testWebDAVMatchesALocalFolder() throws {
        let apache = try ApacheServer()
        try apache.start()
        defer { apache.remove() }
        for seed in seeds {
            let area = "model-\(seed)-\(UUID().uuidString.prefix(6))"
            try FileManager.default.createDirectory(at: apache.documentRoot.appendingPathComponent(area), withIntermediateDirectories: true)
            try apache.fixOwnership()
            try runSeed(seed, remote: apache.davURL + area + "/", serverRoot: apache.documentRoot.path + "/" + area)
        }
    }

    func testLocalProviderMatchesALocalFolder() throws {
        for seed in seeds {
            let served = scratch.appendingPathComponent("served-\(seed)")
            try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
            try runSeed(seed, remote: "file://" + served.path, serverRoot: served.path)
        }
    }

    private func runSeed(_ seed: UInt64, remote: String, serverRoot: String) throws {
        let mount = try MountedFavFS(remote: remote)
        mounts.append(mount)
        try mount.mountOrThrow()
        let modelRoot = scratch.appendingPathComponent("model-\(seed)").path
        try FileManager.default.createDirectory(atPath: modelRoot, withIntermediateDirectories: true)
        let model = DescriptorModel(mountRoot: mount.path, modelRoot: modelRoot, seed: seed, steps: steps)
        let started = Date()
        if let failure = model.run() {
            XCTFail(failure)
            return
        }
        let r = try mount.unmount()
        XCTAssertTrue(r.succeeded, "unmount: \(r)")
        if let failure = model.compareServer(serverRoot) { XCTFail(failure) }
        print("descriptor model: seed \(seed), \(steps) steps on \(remote) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
