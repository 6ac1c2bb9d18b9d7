import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a D-Bus bus over a Unix socket, written from the specification (no libdbus):
/// SASL `AUTH EXTERNAL` with the uid, `BEGIN`, the `Hello` call, then method calls whose reply
/// is waited for, each bounded by `timeout`. Blocking: use it from one thread of its own, never
/// from a FUSE handler. Not thread-safe; the socket (close-on-exec) is closed once, by `close`
/// or when the connection fails (then `isOpen` is false and a new connection is needed).
public final class DBusConnection {
    public let address: String
    public private(set) var uniqueName: String?
    private var fd: Int32 = -1
    private var serial: UInt32 = 0
    private let timeout: Double

    public var isOpen: Bool { fd >= 0 }

    /// The session bus's address: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` if
    /// that socket exists; nil when there is none.
    public static func sessionBusAddress(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let a = environment["DBUS_SESSION_BUS_ADDRESS"], !a.isEmpty { return a }
        if let dir = environment["XDG_RUNTIME_DIR"], dir.hasPrefix("/") {
            let path = (dir as NSString).appendingPathComponent("bus")
            var st = stat()
            if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK { return "unix:path=" + path }
        }
        return nil
    }

    /// Connects, authenticates and says `Hello`; throws when any of it fails or takes longer
    /// than `timeout` seconds.
    public init(address: String, timeout: Double = 5) throws {
        self.address = address
        self.timeout = timeout
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: Error = DBusError("no usable address in '\(address)' (only unix:path= and unix:abstract= are supported)")
        for candidate in address.split(separator: ";") {
            guard let target = Self.socketTarget(String(candidate)) else { continue }
            do {
                try open(target, deadline: deadline)
                break
            } catch {
                lastError = error
                close()
            }
        }
        guard fd >= 0 else { throw lastError }
        do {
            try authenticate(deadline: deadline)
            let reply = try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                 interface: "org.freedesktop.DBus", member: "Hello", deadline: deadline)
            uniqueName = reply.body.first?.stringValue
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the socket (once).
    public func close() {
        if fd >= 0 { _ = Glibc.close(fd); fd = -1 }
    }

    /// Calls a method and returns its METHOD_RETURN; an ERROR reply throws its name and message.
    public func call(destination: String, path: String, interface: String, member: String,
                     body: [DBusValue] = []) throws -> DBusMessage {
        try call(destination: destination, path: path, interface: interface, member: member, body: body,
                 deadline: Date().addingTimeInterval(timeout))
    }

    private func call(destination: String, path: String, interface: String, member: String,
                      body: [DBusValue] = [], deadline: Date) throws -> DBusMessage {
        guard fd >= 0 else { throw DBusError("the connection is closed") }
        serial &+= 1
        if serial == 0 { serial = 1 }
        let mine = serial
        let message = DBusMessage.methodCall(serial: mine, destination: destination, path: path,
                                             interface: interface, member: member, body: body)
        do {
            try send(try message.encoded(), deadline: deadline)
            while true {
                let reply = try receive(deadline: deadline)
                guard reply.replySerial == mine, reply.kind == .methodReturn || reply.kind == .error else { continue }
                if reply.kind == .error {
                    let text = reply.body.first?.stringValue.map { ": " + $0 } ?? ""
                    throw DBusCallError(name: reply.errorName ?? "(no error name)", message: "\(reply.errorName ?? "error")\(text)")
                }
                return reply
            }
        } catch let e as DBusCallError {
            throw e   // an answer: the connection is fine
        } catch {
            close()   // a half-sent or half-read message: this connection is done
            throw error
        }
    }

    // MARK: socket

    enum Target { case path(String), abstract(String) }

    /// `unix:path=/run/user/1000/bus,guid=…` or `unix:abstract=/tmp/dbus-…`, values %-escaped.
    static func socketTarget(_ address: String) -> Target? {
        guard address.hasPrefix("unix:") else { return nil }
        var keys: [String: String] = [:]
        for pair in address.dropFirst(5).split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { continue }
            keys[String(kv[0])] = String(kv[1]).removingPercentEncoding ?? String(kv[1])
        }
        if let p = keys["path"] { return .path(p) }
        if let a = keys["abstract"] { return .abstract(a) }
        return nil
    }

    private func open(_ target: Target, deadline: Date) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DBusError("socket: \(String(cString: strerror(errno)))") }
        // A bus that does not accept in time: connect(2) on a Unix socket waits for the
        // listener's backlog, bounded by the send timeout.
        var tv = timeval(tv_sec: Int(max(1, timeout)), tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        let description: String
        switch target {
        case .path(let p): name = Array(p.utf8) + [0]; description = p
        case .abstract(let a): name = [0] + Array(a.utf8); description = "@" + a
        }
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard name.count <= capacity else { throw DBusError("socket path too long: \(description)") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in name.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + name.count)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard rc == 0 else { throw DBusError("connect to \(description): \(String(cString: strerror(errno)))") }
    }

    private func authenticate(deadline: Date) throws {
        // A NUL byte first (credentials passing), then the SASL lines.
        let uid = String(getuid())
        let hex = uid.utf8.map { String(format: "%02x", $0) }.joined()
        try send([0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8), deadline: deadline)
        let answer = try readLine(deadline: deadline)
        guard answer.hasPrefix("OK ") else { throw DBusError("the bus refused authentication: \(answer)") }
        try send(Array("BEGIN\r\n".utf8), deadline: deadline)
    }

    /// One SASL line, read a byte at a time: nothing after it may be consumed.
    private func readLine(deadline: Date) throws -> String {
        var line: [UInt8] = []
        while !(line.count >= 2 && line.suffix(2) == [13, 10]) {
            guard line.count < 4096 else { throw DBusError("authentication line too long") }
            line += try read(1, deadline: deadline)
        }
        return String(decoding: line.dropLast(2), as: UTF8.self)
    }

    private func send(_ bytes: [UInt8], deadline: Date) throws {
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT), deadline: deadline)
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw DBusError("send to the bus: \(String(cString: strerror(errno)))")
            }
            sent += n
        }
    }

    private func receive(deadline: Date) throws -> DBusMessage {
        let head = try read(16, deadline: deadline)
        let total = try DBusMessage.length(ofHead: head)
        return try DBusMessage.decode(head + (try read(total - 16, deadline: deadline)))
    }

    private func read(_ count: Int, deadline: Date) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            try wait(for: Int16(POLLIN), deadline: deadline)
            let n = out.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw DBusError("read from the bus: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw DBusError("the bus closed the connection") }
            got += n
        }
        return out
    }

    private func wait(for events: Int16, deadline: Date) throws {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw DBusError("no answer from the bus within \(timeout) s") }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&p, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if rc > 0 { return }
            if rc < 0 && errno != EINTR { throw DBusError("poll: \(String(cString: strerror(errno)))") }
        }
    }
}

/// An ERROR reply: the bus or the service answered, the connection is fine.
public struct DBusCallError: Error, CustomStringConvertible, Sendable {
    /// e.g. `org.freedesktop.DBus.Error.ServiceUnknown` (no notification server).
    public let name: String
    public let message: String
    public var description: String { message }
}
