import Foundation

/// The sd_notify protocol, spoken directly (no libsystemd): one datagram per message to the
/// AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace).
/// Without the variable (not started by systemd with `Type=notify`) every call does nothing.
struct SystemdNotify: Sendable {
    private let address: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        address = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    var isActive: Bool { address != nil }

    /// `READY=1`: the mount answers.
    func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    /// `STATUS=…`: one line for `systemctl status`.
    func status(_ text: String) { send("STATUS=\(text)") }
    /// `STOPPING=1`: unmounting; uploads may still be finishing.
    func stopping(status: String) { send("STOPPING=1\nSTATUS=\(status)") }

    /// Best effort, as sd_notify(3): a failure to tell systemd must not fail the mount.
    @discardableResult
    func send(_ message: String) -> Bool {
        guard let address else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        var path = Array(address.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // abstract socket
        let capacity = MemoryLayout.size(ofValue: sa.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            raw.copyBytes(from: path)
        }
        // An abstract name's length is exact (no terminating NUL counts).
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &sa) { sp in
            sp.withMemoryRebound(to: sockaddr.self, capacity: 1) { addr in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), addr, length) }
            }
        }
        return sent == bytes.count
    }
}
