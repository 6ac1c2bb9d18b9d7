import FavFSCore
import Foundation

/// OpenSSH's way of naming a host key: `SHA256:` and the unpadded base64 of the SHA-256 of the
/// key's wire-format blob (what `ssh-keygen -lf` and `ssh` print), with the key's type.
enum SSHFingerprint {
    /// E.g. "ssh-ed25519 SHA256:5Jd8…"; nil for a blob too short to be a key.
    static func describe(_ blob: [UInt8]) -> String? {
        guard blob.count >= 4 else { return nil }
        let typeLength = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        let type = typeLength > 0 && 4 + typeLength <= blob.count
            ? String(decoding: blob[4..<(4 + typeLength)], as: UTF8.self) : "key"
        let digest = Data(SHA256.digest(blob)).base64EncodedString().replacingOccurrences(of: "=", with: "")
        return "\(type) SHA256:\(digest)"
    }
}
