import Curl
import Foundation
import Providers

/// A user's sign-in at the terminal for a remote whose secret is a refresh token (OAuth 2
/// authorization code with PKCE, `OAuthSignIn`). With a desktop (DISPLAY or WAYLAND_DISPLAY,
/// and `xdg-open`), the consent page opens in the browser and comes back to a loopback
/// listener (`LoopbackRedirect`); without one, the URL is printed and the code the page shows
/// is read from standard input, or, for a service with a device authorization endpoint
/// (Microsoft), its page and a code to enter there are printed and the token endpoint is
/// polled. Either way the wait is bounded.
struct InteractiveSignIn {
    let method: OAuthSignIn
    /// The loopback port the browser comes back to; nil: one the system picks. (A service
    /// that matches redirect URIs exactly, port included, needs the registered one.)
    var redirectPort: Int?
    /// The longest wait for the user (a browser's redirect, a pasted code).
    var wait: Double = 300

    /// The refresh token, or a `CLIError` saying why there is none.
    func run() async throws -> String {
        let pkce = PKCE()
        if let opener = Self.desktopOpener() {
            return try await withBrowser(opener, pkce: pkce)
        }
        if method.deviceAuthorizationURL != nil {
            return try await withDeviceCode()
        }
        return try await withPastedCode(pkce: pkce)
    }

    /// `xdg-open`'s path when there is a desktop to open a browser on, else nil.
    static func desktopOpener(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let display = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
        guard display else { return nil }
        for dir in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = String(dir) + "/xdg-open"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    private func withBrowser(_ opener: String, pkce: PKCE) async throws -> String {
        let listener: LoopbackRedirect
        do { listener = try LoopbackRedirect(port: redirectPort ?? 0) } catch { throw CLIError("favfs: cannot sign in to \(method.service): \(error)", status: .ioError) }
        let state = PKCE.randomToken(bytes: 16)
        let redirectURI = method.redirectURI(port: listener.port)
        let url = method.authorizationURL(pkce: pkce, state: state, redirectURI: redirectURI)
        Self.say("opening \(method.service)'s sign-in page in your browser (if it does not open, visit this address):\n  \(url)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url]
        do { try process.run() } catch {
            throw CLIError("favfs: cannot run \(opener) to open the sign-in page: \(error.localizedDescription)", status: .unavailable)
        }
        let service = method.service
        let answer: LoopbackRedirect.Answer
        do {
            answer = try listener.wait(seconds: wait) { answer in
                if answer.parameters["error"] != nil || answer.parameters["state"] != state {
                    return "<p>favfs was not signed in to \(service). You can close this tab; the terminal says why.</p>"
                }
                return "<p>favfs is signed in to \(service). You can close this tab and go back to the terminal.</p>"
            }
        } catch LoopbackRedirect.Failure.timedOut {
            throw CLIError("favfs: signing in to \(service) timed out: the browser did not come back within \(Int(wait / 60)) minutes; nothing was stored (run the command again)",
                           status: .temporaryFailure)
        } catch {
            throw CLIError("favfs: signing in to \(service) failed: \(error)", status: .ioError)
        }
        if let error = answer.parameters["error"] {
            throw Self.refusal(service: service, error: error, description: answer.parameters["error_description"])
        }
        guard answer.parameters["state"] == state, let code = answer.parameters["code"], !code.isEmpty else {
            throw CLIError("favfs: signing in to \(service) failed: the browser came back with another sign-in's answer (state differs); nothing was stored",
                           status: .dataError)
        }
        return try await redeem(code, pkce: pkce, redirectURI: redirectURI)
    }

    private func withPastedCode(pkce: PKCE) async throws -> String {
        let url = method.authorizationURL(pkce: pkce, state: nil, redirectURI: nil)
        Self.say("to sign in to \(method.service), open this address in a browser, allow access, and paste the code it shows:\n  \(url)")
        if isatty(STDIN_FILENO) == 1 { FileHandle.standardError.write(Data("Code: ".utf8)) }
        let line: String
        switch Self.readLine(within: wait) {
        case .line(let text): line = text
        case .ended:
            throw CLIError("favfs: signing in to \(method.service): standard input ended before a code was pasted; nothing was stored", status: .usage)
        case .timedOut:
            throw CLIError("favfs: signing in to \(method.service): no code on standard input within \(Int(wait / 60)) minutes; nothing was stored",
                           status: .temporaryFailure)
        }
        let code = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty else {
            throw CLIError("favfs: signing in to \(method.service): the code is empty; nothing was stored", status: .usage)
        }
        return try await redeem(code, pkce: pkce, redirectURI: nil)
    }

    /// The device authorization grant: the service's message (its page and the code to enter
    /// there), then polls until the user is done, declines, or the code or the wait runs out.
    private func withDeviceCode() async throws -> String {
        let transport = CurlTransport()
        do {
            let authorization = try await method.startDeviceAuthorization(transport: transport)
            Self.say("there is no desktop to open \(method.service)'s sign-in page on. \(authorization.message)")
            Self.say("waiting for the sign-in (at most \(Int(min(wait, authorization.expiresIn) / 60)) minutes)...")
            return try await method.waitForDeviceToken(authorization, wait: wait, transport: transport)
        } catch {
            throw Self.failure(error)
        }
    }

    private func redeem(_ code: String, pkce: PKCE, redirectURI: String?) async throws -> String {
        do {
            return try await method.redeem(code: code, pkce: pkce, redirectURI: redirectURI, transport: CurlTransport())
        } catch {
            throw Self.failure(error)
        }
    }

    /// The command's error for a failed sign-in: its exit status by kind.
    static func failure(_ error: SignInError) -> CLIError {
        let status: ExitStatus = switch error.kind {
        case .unreachable: .unavailable
        case .codeRefused, .unknownApp, .denied: .permission
        case .timedOut: .temporaryFailure
        case .invalidResponse: .dataError
        }
        if error.kind == .denied {
            return CLIError("favfs: signing in to \(error.service) was denied: \(error.detail); nothing was stored", status: status)
        }
        return CLIError("favfs: \(error); nothing was stored", status: status)
    }

    /// The consent page's `error` (`access_denied`: the user said no).
    static func refusal(service: String, error: String, description: String?) -> CLIError {
        let said = description.map { " (\($0))" } ?? ""
        if error == "access_denied" {
            return CLIError("favfs: signing in to \(service) was denied\(said): access was not allowed on \(service)'s page; nothing was stored",
                            status: .permission)
        }
        return CLIError("favfs: signing in to \(service) failed: \(error)\(said); nothing was stored", status: .permission)
    }

    enum Input { case line(String), ended, timedOut }

    /// One line of standard input, waiting at most `seconds`.
    static func readLine(within seconds: Double) -> Input {
        var p = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return .timedOut }
            let ready = poll(&p, 1, Int32(min(left, 60) * 1000))
            if ready > 0 { return Swift.readLine(strippingNewline: true).map(Input.line) ?? .ended }
            if ready < 0 && errno != EINTR { return .ended }
        }
    }

    private static func say(_ text: String) {
        FileHandle.standardError.write(Data(("favfs: " + text + "\n").utf8))
    }
}
