import Foundation

/// The database failed SQLite's own check.
public struct DamagedDatabase: Error, CustomStringConvertible {
    public let path: String
    public let findings: [String]
    public var description: String { "\(path) is damaged: \(findings.prefix(3).joined(separator: "; "))" }
}
