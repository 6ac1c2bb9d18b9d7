import Foundation
/// Every provider's test server, in the order the suites run them. Add a provider here once
/// and both the provider conformance suite and the end-to-end mount suite run against it.
/// `FAVFS_CONFORMANCE_ONLY=smb,sftp` keeps only the servers of those names (to chase one
/// server's failure without starting every other).
public enum ConformanceServers {
    public static let all: [any ConformanceServer] = {
        let only = ProcessInfo.processInfo.environment["FAVFS_CONFORMANCE_ONLY"]
            .map { Set($0.split(separator: ",").map(String.init)) }
        return every.filter { only?.contains($0.name) ?? true }
    }()

    private static let every: [any ConformanceServer] = [
        LocalConformanceServer.shared,
        ApacheConformanceServer.webdav,
        NginxDAVConformanceServer.shared,
        WsgiDAVConformanceServer.shared,
        S3ConformanceServer.shared,
        SFTPConformanceServer.shared,
        SambaConformanceServer.shared,
        DropboxConformanceServer.shared,
        FTPConformanceServer.shared,
        FTPConformanceServer.ftps,
        VsftpdConformanceServer.shared,
        ProftpdConformanceServer.shared,
        FavartConformanceServer.shared,
        ApacheConformanceServer.httpIndex,
        NginxIndexConformanceServer.shared,
    ]
}
