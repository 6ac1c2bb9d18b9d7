/// Every provider's test server, in the order the suites run them. Add a provider here once
/// and both the provider conformance suite and the end-to-end mount suite run against it.
public enum ConformanceServers {
    public static let all: [any ConformanceServer] = [
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
