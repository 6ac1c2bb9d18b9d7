import Foundation
import TestSupport
import XCTest

/// A sign-in test's own homes (XDG_CONFIG_HOME, XDG_CACHE_HOME, so the remotes file is its
/// own) and its "browser": a fake `xdg-open` first on PATH that follows the consent page's
/// redirects with curl, as a browser would (what it ends on: `browserPage`).
final class SignInHomes {
    let base: URL
    var config: URL { base.appendingPathComponent("config") }
    var cache: URL { base.appendingPathComponent("cache") }
    var bin: URL { base.appendingPathComponent("bin") }
    var remotesFile: String { config.appendingPathComponent("favfs/remotes.toml").path }
    private var mounts: [MountedFavFS] = []

    init(_ label: String) throws {
        base = URL(fileURLWithPath: "/tmp").appendingPathComponent("favfs-e2e-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opener = bin.appendingPathComponent("xdg-open")
        try "#!/bin/sh\nexec curl -sS -L --max-time 30 -o \(shq(base.appendingPathComponent("browser.html").path)) \"$1\" 2>>\(shq(base.appendingPathComponent("browser.err").path))\n"
            .write(to: opener, atomically: true, encoding: .utf8)
        chmod(opener.path, 0o755)
    }

    /// favfs with these homes; `desktop`: DISPLAY set and the fake xdg-open first on PATH.
    func favfs(_ args: [String], desktop: Bool, stdin: String? = nil, timeout: Double = 60) throws -> TimedProcess.Result {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        var env = ["-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "XDG_CONFIG_HOME=\(config.path)", "XDG_CACHE_HOME=\(cache.path)"]
        if desktop { env += ["DISPLAY=:99", "PATH=\(bin.path):\(path)"] }
        return try TimedProcess.run("/usr/bin/env", env + [FavFSBinary.path] + args, stdin: stdin, timeout: timeout)
    }

    /// The remotes file as it is now ("" before there is one).
    func storedText() -> String { (try? String(contentsOfFile: remotesFile, encoding: .utf8)) ?? "" }

    /// The page the "browser" ended on, and what curl said.
    var browserPage: String { (try? String(contentsOf: base.appendingPathComponent("browser.html"), encoding: .utf8)) ?? "" }
    var browserErrors: String { (try? String(contentsOf: base.appendingPathComponent("browser.err"), encoding: .utf8)) ?? "" }

    /// A mount point (and cache dir) for the remote named `name`, torn down by `remove()`.
    func mountPoint(for name: String) throws -> MountedFavFS {
        let m = try MountedFavFS(remote: name, cacheDir: cache.appendingPathComponent(name))
        mounts.append(m)
        return m
    }

    /// Mounts the remote by name, lists it, unmounts.
    func mountAndList(_ name: String) throws -> [String] {
        let m = try mountPoint(for: name)
        let r = try favfs(["mount", m.path, "--remote", name, "--cache-dir", m.cacheDir.path], desktop: false, timeout: 90)
        guard r.succeeded, m.isMounted else { throw ShellError("mount \(name): \(r)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: m.path).sorted()
        XCTAssertTrue(try favfs(["unmount", m.path], desktop: false).succeeded)
        return names
    }

    /// Unmounts what is left and removes the homes.
    func remove() {
        for m in mounts { m.tearDown() }
        try? FileManager.default.removeItem(at: base)
    }
}
