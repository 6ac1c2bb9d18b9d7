import ArgumentParser
import Foundation
import FavFSCore
import Providers

/// `favfs remote test NAME|URL`: connect, list the root's first page, say what the remote can do.
struct RemoteTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Check a remote: connect, list its root, show capabilities and quota; exits non-zero on failure (see EXIT STATUS in man favfs).",
        discussion: """
            Lists the first page of the remote's root folder and reports the time it took (connection included), the number of items, whether a mount would be writable, what the remote can do, and its quota where it says. A failure (authentication, unreachable, no such folder, unknown option) is explained and exits with its status (77 authentication, 69 unreachable, 65 no such folder or a bad option). NAME may also be a URL, to check it before adding it.

            Examples:
              favfs remote test nas
              favfs remote test s3://bucket --option region=eu-west-1
              echo "$PASS" | favfs remote test dav://me@127.0.0.1:8080/files/ \\
                  --password-stdin

              $ favfs remote test nas
              favfs: nas (dav://me@nas.local:8080/files/): ok
              listed / in 38 ms: 12 items
              access: read-write
              capabilities: write, rename, delete, create-folder, ranged-reads, versions
              quota: 1.2 GiB used, 410.5 GiB available
            """)

    @Argument(help: "A remote's name, or a URL.")
    var remote: String

    @Option(name: .customLong("option"), help: ArgumentHelp("A provider option for this test, KEY=VALUE (repeatable; wins over stored ones).", valueName: "key=value"))
    var options: [String] = []

    @Flag(help: "Read the password or secret from the first line of standard input (instead of the stored one).")
    var passwordStdin = false

    @Flag(help: "Print JSON (field names in docs/commands.md); a failure is {\"ok\": false, \"error\": …} and the same exit status.")
    var json = false

    /// What the test found; the `--json` document.
    struct Report: Codable {
        var remote: String
        var ok: Bool
        var error: String?
        var exitStatus: Int32
        var listMilliseconds: Int?
        var items: Int?
        var morePages: Bool?
        var skippedNames: Int?
        var readOnly: Bool?
        var capabilities: [String]?
        var quotaUsedBytes: Int64?
        var quotaAvailableBytes: Int64?
        var quotaError: String?
    }

    func run() async throws {
        do { try await test() } catch let e as CLIError {
            if json {
                let report = Report(remote: remote, ok: false, error: e.description, exitStatus: e.status.rawValue)
                print(JSONOutput.encode(report))
                Glibc.exit(e.status.rawValue)
            }
            e.exit()
        }
    }

    private func test() async throws {
        var config = try RemoteSelection.resolve(remote, overrides: OptionPairs.parse(options))
        try RemoteOptionCheck.validate(config)
        if passwordStdin { config.secret = try SecretInput.read(prompt: "Secret for \(RemoteSelection.label(config)): ") }
        let label = RemoteSelection.label(config)

        let clock = ContinuousClock()
        let start = clock.now
        let provider: any Provider
        let page: EnumerationPage
        do {
            provider = try ProviderFactory.make(config)
            page = try await provider.enumerateItems(in: .rootContainer, page: nil)
        } catch let e as ProviderError {
            throw CLIError("favfs: \(label): failed: " + MountRunner.explain(e, remote: config.url, name: config.name, offline: false), status: .of(e))
        } catch {
            throw CLIError("favfs: \(label): failed: \(error)")
        }
        let elapsed = start.duration(to: clock.now)
        let ms = Int(elapsed.components.seconds * 1000) + Int(elapsed.components.attoseconds / 1_000_000_000_000_000)

        // The same test as a mount's (Domain.isWritable), so this says what a mount would do.
        var report = Report(remote: label, ok: true, exitStatus: 0, listMilliseconds: ms, items: page.items.count,
                            morePages: page.nextPage != nil, skippedNames: page.skipped.count,
                            readOnly: !(provider is any WritableProvider), capabilities: provider.capabilities.names)
        var quota = "not reported"
        do {
            if let q = try await provider.quota() {
                report.quotaUsedBytes = q.usedBytes
                report.quotaAvailableBytes = q.availableBytes
                let parts = [q.usedBytes.map { "\(ByteSize.format($0)) used" }, q.availableBytes.map { "\(ByteSize.format($0)) available" }]
                    .compactMap { $0 }
                if !parts.isEmpty { quota = parts.joined(separator: ", ") }
            }
        } catch {
            report.quotaError = "\(error)"
            quota = "could not be read (\(error))"
        }
        if json {
            print(JSONOutput.encode(report))
            return
        }
        print("favfs: \(label): ok")
        let n = page.items.count
        print("listed / in \(ms) ms: \(n) item\(n == 1 ? "" : "s")\(page.nextPage == nil ? "" : " on the first page (more follow)")" +
              (page.skipped.isEmpty ? "" : "; \(Plural.count(page.skipped.count, "name")) skipped (not valid here)"))
        print("access: \(report.readOnly == true ? "read-only" : "read-write")")
        let names = provider.capabilities.names
        print("capabilities: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        print("quota: \(quota)")
    }
}
