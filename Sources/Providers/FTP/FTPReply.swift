import Foundation

/// One reply on the control connection: a three-digit code and its lines (RFC 959 §4.2: a
/// multi-line reply runs from `ddd-text` to `ddd text`).
struct FTPReply: Sendable, Equatable {
    var code: Int
    var lines: [String]

    /// The reply as one line, for messages: `550 No such file or directory.`
    var text: String {
        guard let last = lines.last else { return "\(code)" }
        return last.count > 4 ? last : "\(code)"
    }

    /// Groups control-connection lines (`CurlResponse.replyLines`) into replies.
    static func group(_ lines: [String]) -> [FTPReply] {
        var replies: [FTPReply] = []
        var open: FTPReply?
        for line in lines {
            let code = Self.code(line)
            if var current = open {
                current.lines.append(line)
                // The last line of a multi-line reply repeats the code followed by a space.
                if code == current.code, line.count == 3 || line.dropFirst(3).first == " " {
                    replies.append(current)
                    open = nil
                } else {
                    open = current
                }
            } else if let code {
                if line.dropFirst(3).first == "-" {
                    open = FTPReply(code: code, lines: [line])
                } else {
                    replies.append(FTPReply(code: code, lines: [line]))
                }
            }
        }
        if let open { replies.append(open) }
        return replies
    }

    /// The code a line starts with (`550 ...`, `250-...`), if it does.
    static func code(_ line: String) -> Int? {
        let prefix = line.prefix(3)
        guard prefix.count == 3, prefix.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let next = line.dropFirst(3).first
        guard next == nil || next == " " || next == "-" else { return nil }
        return Int(prefix)
    }

    /// The entries of the MLST replies among `lines`, in order (a pinned read has one before and
    /// one after the transfer).
    static func mlstEntries(_ lines: [String]) -> [FTPEntry] {
        group(lines).filter { $0.code == 250 }.compactMap { FTPMachineListing.entry(inReply: $0.lines) }
    }
}

/// What the server says it can do (FEAT, RFC 2389), asked once per remote.
struct FTPFeatures: Sendable, Equatable {
    /// MLST/MLSD (RFC 3659): machine listings with exact sizes and second-precision times.
    var machineListings: Bool
    /// MFMT: set a file's modification time.
    var setModified: Bool
    /// SIZE and MDTM (RFC 3659): a file's size and time, on the control connection.
    var sizeAndTime = false

    static let none = FTPFeatures(machineListings: false, setModified: false)

    /// From the lines of a FEAT reply (` MLST type*;size*;modify*;`, ` MFMT`, ...).
    static func parse(_ lines: [String]) -> FTPFeatures {
        guard let feat = FTPReply.group(lines).last(where: { $0.code == 211 }) else { return .none }
        let names = Set(feat.lines.dropFirst().filter { $0.hasPrefix(" ") }.compactMap {
            $0.dropFirst().split(separator: " ").first.map { $0.uppercased() }
        })
        return FTPFeatures(machineListings: names.contains("MLST") || names.contains("MLSD"), setModified: names.contains("MFMT"),
                           sizeAndTime: names.contains("SIZE") && names.contains("MDTM"))
    }
}
