import Foundation
import Logging

/// Log lines on standard error with a syslog priority prefix (`<3>`…`<7>`), which journald
/// turns into the line's priority: used when systemd connected our stderr to the journal
/// (`$JOURNAL_STREAM` names stderr's device and inode), so `journalctl -p warning` works.
struct JournalLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level = event.level, message = event.message
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        // journald takes one entry per line: a message with newlines keeps its priority on each.
        let text = "\(message)\(fields)".split(separator: "\n", omittingEmptySubsequences: false)
            .map { "<\(Self.priority(level))>\(label): \($0)" }.joined(separator: "\n")
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// syslog(3) priorities.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// Whether stderr is the journal stream systemd announced (`$JOURNAL_STREAM` = "DEV:INODE").
    static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(STDERR_FILENO, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}
