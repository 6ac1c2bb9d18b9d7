import Foundation

/// The end of a browser sign-in: a listener on 127.0.0.1 at a port the system picks, where the
/// consent page sends the browser back (`http://127.0.0.1:PORT/?code=…&state=…`, or
/// `http://localhost:PORT/…` for a service that wants that name: `OAuthSignIn.loopbackHost`). It answers
/// that one request with a short page and hands its query over; other requests (a favicon)
/// get a 404. Loopback only: nothing on the network can reach it.
final class LoopbackRedirect {
    /// The query of the redirect: `code` and `state`, or `error` and `error_description`.
    struct Answer {
        var parameters: [String: String]
    }

    enum Failure: Error, CustomStringConvertible {
        case socket(String)
        case timedOut(seconds: Int)
        var description: String {
            switch self {
            case .socket(let what): return "the sign-in listener on 127.0.0.1: \(what)"
            case .timedOut(let seconds): return "no answer from the browser within \(seconds / 60) minutes"
            }
        }
    }

    private let fd: Int32
    /// The port the listener is on.
    let port: Int

    /// A listener on `port` of 127.0.0.1; 0: a port the system picks.
    init(port requested: Int = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure.socket("socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = in_port_t(UInt16(clamping: requested).bigEndian)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                bind(fd, a, len) == 0 && listen(fd, 8) == 0 && getsockname(fd, a, &len) == 0
            }
        }
        guard bound else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw Failure.socket("listening on port \(requested == 0 ? "(any)" : String(requested)): \(why)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    deinit { close(fd) }

    /// Waits (blocking this thread: the command has nothing else to do) for the redirect, at
    /// most `seconds`; answers the browser with `page(answer)`.
    func wait(seconds: Double, page: (Answer) -> String) throws -> Answer {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw Failure.timedOut(seconds: Int(seconds)) }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno != EINTR { throw Failure.socket("poll: \(String(cString: strerror(errno)))") }
            guard ready > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            defer { close(client) }
            guard let target = Self.requestTarget(client, deadline: min(deadline, Date().addingTimeInterval(10))),
                  let parts = URLComponents(string: "http://127.0.0.1" + target), parts.path == "/",
                  let items = parts.queryItems, items.contains(where: { $0.name == "code" || $0.name == "error" }) else {
                Self.respond(client, status: "404 Not Found", body: "<p>Not the sign-in answer.</p>")
                continue
            }
            var parameters: [String: String] = [:]
            for item in items { parameters[item.name] = item.value ?? "" }
            let answer = Answer(parameters: parameters)
            Self.respond(client, status: "200 OK", body: page(answer))
            return answer
        }
    }

    /// The target of a request's first line (`GET /?code=… HTTP/1.1`), read within `deadline`.
    /// The whole head is read: closing with bytes unread would reset the connection under the
    /// answer.
    private static func requestTarget(_ client: Int32, deadline: Date) -> String? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while bytes.count < 16_384 {
            if let range = bytes.firstRange(of: end) {
                let head = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
                let words = (head.split(separator: "\r\n").first ?? "").split(separator: " ")
                guard words.count == 3, words[0] == "GET" else { return nil }
                return String(words[1])
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var p = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left * 1000)) > 0 else { return nil }
            let n = read(client, &buffer, buffer.count)
            guard n > 0 else { return nil }
            bytes += buffer[..<n]
        }
        return nil
    }

    private static func respond(_ client: Int32, status: String, body: String) {
        let html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>favfs</title></head><body>\(body)</body></html>"
        let text = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(html.utf8.count)\r\nConnection: close\r\n\r\n" + html
        let data = Array(text.utf8)
        var sent = 0
        while sent < data.count {
            let n = data[sent...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            guard n > 0 else { return }
            sent += n
        }
        shutdown(client, Int32(SHUT_WR))
    }
}
