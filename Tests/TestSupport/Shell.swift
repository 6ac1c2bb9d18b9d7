import Foundation

public struct ShellError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Runs programs for tests: output captured, exit status returned.
public enum Shell {
    public struct Result: Sendable { public let status: Int32; public let output: String; public let error: String }

    @discardableResult
    public static func run(_ path: String, _ args: [String], stdin: String? = nil, environment: [String: String]? = nil,
                           cwd: String? = nil) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        if let environment {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let inPipe = Pipe()
        p.standardInput = inPipe
        try p.run()
        if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        // Read both pipes concurrently so neither fills up.
        nonisolated(unsafe) var errData = Data()
        let t = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        t.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !t.isFinished { usleep(1000) }
        return Result(status: p.terminationStatus, output: String(decoding: outData, as: UTF8.self),
                      error: String(decoding: errData, as: UTF8.self))
    }

    /// Runs `bash -c command`.
    @discardableResult
    public static func sh(_ command: String, stdin: String? = nil, environment: [String: String]? = nil) throws -> Result {
        try run("/bin/bash", ["-c", command], stdin: stdin, environment: environment)
    }

    public static func md5Hex(_ s: String) -> String {
        let r = try? run("/usr/bin/md5sum", [], stdin: s)
        return String((r?.output ?? "").prefix(32))
    }
}

/// Loopback ports for test servers.
public enum FreePort {
    /// A port that was free a moment ago (bound to 0, read back, closed).
    public static func next() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ShellError("socket failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw ShellError("bind failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    public static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    public static func waitUntilListening(port: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if isListening(port: port) { return true }
            usleep(50_000)
        }
        return false
    }
}

/// Whether tests must fail (CI=true) rather than skip when a server or /dev/fuse is missing.
public enum TestEnvironment {
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
    public static var hasFUSE: Bool { FileManager.default.fileExists(atPath: "/dev/fuse") }
}
