import Foundation

/// The one Python the tests run their Python servers and helpers with (moto, pyftpdlib, the
/// Favart and hostile WebDAV fixtures, Pillow):
///
/// 1. `FAVFS_TEST_PYTHON`, when set (a path, or a name looked up on `PATH`);
/// 2. else `<package root>/.venv/bin/python3`, the virtual environment `make setup` makes with
///    Debian's python3 (whose own site-packages pip may not touch, PEP 668) and fills with what
///    Debian lacks;
/// 3. else the first `python3` on `PATH`.
///
/// Always a full path (posix_spawn does not search `PATH`), or nil when there is none. Whether it
/// has the modules a server needs is that server's question (`canImport`).
public enum TestPython {
    /// The package's root, found from this file's place in it (Tests/TestSupport/TestPython.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The virtual environment's python3 that `make setup` makes.
    public static var venvPython: String { packageRoot.appendingPathComponent(".venv/bin/python3").path }

    public static let path: String? = {
        let env = ProcessInfo.processInfo.environment
        if let chosen = env["FAVFS_TEST_PYTHON"], !chosen.isEmpty {
            return chosen.contains("/") ? chosen : onPath(chosen, env)
        }
        // Not resolving symlinks: a venv's python3 links to the base one, and only started by
        // its own path does it use the venv's packages.
        if FileManager.default.isExecutableFile(atPath: venvPython) { return venvPython }
        return onPath("python3", env)
    }()

    /// Where `path` came from, for messages: which Python lacked a module, and how to fix it.
    public static var description: String {
        guard let path else { return "no python3 (FAVFS_TEST_PYTHON unset, no \(venvPython), none on PATH); run make setup" }
        return "\(path) (FAVFS_TEST_PYTHON, else \(venvPython) from make setup, else python3 on PATH)"
    }

    /// True when the test Python exists and imports every one of `modules`.
    public static func canImport(_ modules: [String]) -> Bool {
        guard let path else { return false }
        return (try? Shell.run(path, ["-c", "import " + modules.joined(separator: ", ")]).status) == 0
    }

    private static func onPath(_ name: String, _ env: [String: String]) -> String? {
        (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
