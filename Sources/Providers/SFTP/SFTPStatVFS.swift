import Foundation
import FavFSCore

/// libcurl's answer to the `statvfs` quote command: header text `statvfs:\nf_bsize: 4096\n...`.
/// The transport may keep it as one "statvfs" header holding the other lines, or as one header per line.
enum SFTPStatVFS {
    static func quota(fromHeaders headers: [String: String]) -> Quota? {
        var fields: [String: UInt64] = [:]
        let text = ([headers["statvfs"] ?? ""] + headers.filter { $0.key.hasPrefix("f_") }.map { "\($0.key): \($0.value)" })
            .joined(separator: "\n")
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let value = UInt64(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
            fields[parts[0].trimmingCharacters(in: .whitespaces).lowercased()] = value
        }
        guard let frsize = fields["f_frsize"] ?? fields["f_bsize"], let blocks = fields["f_blocks"],
              let free = fields["f_bfree"], let avail = fields["f_bavail"], frsize > 0 else { return nil }
        return Quota(usedBytes: Int64(clamping: (blocks &- min(free, blocks)) &* frsize), availableBytes: Int64(clamping: avail &* frsize),
                     totalBytes: Int64(clamping: blocks &* frsize), freeBytes: Int64(clamping: free &* frsize))
    }
}
