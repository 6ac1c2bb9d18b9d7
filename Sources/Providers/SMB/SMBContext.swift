import CSMBClient
import FavFSCore
import Foundation

/// How every libsmbclient context of one remote is set up.
struct SMBSettings: Sendable {
    var domain: String?
    var user: String
    var password: String
    /// The server's TCP port; nil: 445.
    var port: Int?
    /// How long to wait for a connection and for each reply (libsmbclient's one timeout).
    var timeoutMilliseconds: Int32
}

/// One libsmbclient context (its connections to the server, its session): made, used and
/// freed on one thread (`SMBConnections`), as libsmbclient requires of a context. Frees the
/// context, then the credentials it points to, exactly once.
final class SMBContext {
    let handle: UnsafeMutablePointer<SMBCCTX>
    private let credentials: UnsafeMutablePointer<favfs_smb_credentials>

    init(_ settings: SMBSettings, remote: String) throws {
        guard let ctx = smbc_new_context() else {
            throw ProviderError(.localIO, remote: remote, detail: "libsmbclient could not make a context: \(String(cString: strerror(errno)))")
        }
        // Only the password given: no Kerberos ticket of the user's, no anonymous fallback
        // that would turn a wrong password into an empty share.
        smbc_setOptionUseKerberos(ctx, 0)
        smbc_setOptionFallbackAfterKerberos(ctx, 1)
        smbc_setOptionNoAutoAnonymousLogin(ctx, 1)
        smbc_setOptionUseCCache(ctx, 0)
        smbc_setDebug(ctx, 0)
        smbc_setTimeout(ctx, settings.timeoutMilliseconds)
        if let port = settings.port { smbc_setPort(ctx, UInt16(port)) }
        credentials = .allocate(capacity: 1)
        credentials.initialize(to: favfs_smb_credentials(domain: settings.domain.map { UnsafePointer(strdup($0)) },
                                                         user: UnsafePointer(strdup(settings.user)),
                                                         password: UnsafePointer(strdup(settings.password))))
        guard smbc_init_context(ctx) != nil else {
            let err = errno
            smbc_free_context(ctx, 1)
            Self.free(credentials)
            throw ProviderError(.localIO, remote: remote, detail: "libsmbclient could not start: \(String(cString: strerror(err)))")
        }
        favfs_smb_use_credentials(ctx, credentials)
        handle = ctx
    }

    deinit {
        // 1: close the context's connections even with files open (a failed transfer's).
        smbc_free_context(handle, 1)
        Self.free(credentials)
    }

    private static func free(_ c: UnsafeMutablePointer<favfs_smb_credentials>) {
        Foundation.free(UnsafeMutableRawPointer(mutating: c.pointee.domain))
        Foundation.free(UnsafeMutableRawPointer(mutating: c.pointee.user))
        Foundation.free(UnsafeMutableRawPointer(mutating: c.pointee.password))
        c.deinitialize(count: 1)
        c.deallocate()
    }
}
