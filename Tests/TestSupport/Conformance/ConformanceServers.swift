import Foundation

/// Every provider's test server, in the order the suites run them. Add a provider here once
/// and both the provider conformance suite and the end-to-end mount suite run against it.
///
/// `FAVFS_CONFORMANCE_ONLY=onedrive,dropbox` keeps only the servers of those names, so the
/// parameterised suites can be run for one provider while it is being written.
public enum ConformanceServers {
    public static let all: [any ConformanceServer] = {
        guard let only = ProcessInfo.processInfo.environment["FAVFS_CONFORMANCE_ONLY"], !only.isEmpty else { return every }
        let names = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return every.filter { names.contains($0.name) }
    }()

    static let every: [any ConformanceServer] = [
        LocalConformanceServer.shared,
        ApacheConformanceServer.webdav,
        NginxDAVConformanceServer.shared,
        WsgiDAVConformanceServer.shared,
        S3ConformanceServer.shared,
        SFTPConformanceServer.shared,
        SambaConformanceServer.shared,
        DropboxConformanceServer.shared,
        OneDriveConformanceServer.shared,
        FTPConformanceServer.shared,
        FTPConformanceServer.ftps,
        VsftpdConformanceServer.shared,
        ProftpdConformanceServer.shared,
        FavartConformanceServer.shared,
        ApacheConformanceServer.httpIndex,
        NginxIndexConformanceServer.shared,
    ]
}
