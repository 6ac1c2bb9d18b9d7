import CCurl

/// What the linked libcurl is and speaks (`curl_version_info`), for `favfs --version`.
public enum CurlVersion {
    /// "libcurl 7.88.1 (OpenSSL/3.0.11, libssh2/1.10.0, nghttp2/1.52.0)" and
    /// "protocols: dict file ftp ftps … sftp …".
    public static var lines: [String] {
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return ["libcurl: unknown"] }
        // The struct lives in libcurl's static storage: read it here and keep only Swift strings.
        let data = info.pointee
        func string(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        let libraries = [string(data.ssl_version), string(data.libssh_version),
                         string(data.nghttp2_version).map { "nghttp2/" + $0 }]
            .compactMap { $0 }
        var protocols: [String] = []
        if var p = data.protocols {
            while let name = p.pointee {
                protocols.append(String(cString: name))
                p += 1
            }
        }
        return ["libcurl \(string(data.version) ?? "?")" + (libraries.isEmpty ? "" : " (\(libraries.joined(separator: ", ")))"),
                "protocols: " + protocols.joined(separator: " ")]
    }
}
