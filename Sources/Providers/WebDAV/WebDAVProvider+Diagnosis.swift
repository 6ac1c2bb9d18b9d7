import FavFSCore

extension WebDAVProvider {
    /// Turns a failure whose status says little into the error it stands for, by looking at
    /// the target and its parent (one or two PROPFINDs, only after a failure). Apache mod_dav_fs
    /// answers a MOVE into a missing folder with 500 ("Could not rename resource") and a MKCOL
    /// where a file is with 400 ("extraneous path components"), where RFC 4918 says 409 and 405.
    /// The HTTP status stays what the server sent; the detail says what was found.
    func diagnose(_ error: ProviderError, target: ItemIdentifier, targetMustNotExist: Bool) async -> ProviderError {
        guard error.kind == .serverError, let status = error.status, status == 400 || status == 500 else { return error }
        let said = error.detail.components(separatedBy: " — ").first ?? error.detail
        func explained(_ kind: ProviderError.Kind, _ why: String) -> ProviderError {
            ProviderError(kind, remote: error.remote, path: error.path, status: error.status, detail: "\(said); \(why)")
        }
        if targetMustNotExist, (try? await item(for: target)) != nil {
            return explained(.exists, "\(target.rawValue) already exists")
        }
        guard let parent = target.parent, !parent.isRoot else { return error }
        do {
            let folder = try await item(for: parent)
            if folder.kind != .folder { return explained(.notAFolder, "\(parent.rawValue) is not a folder") }
        } catch let lookup as ProviderError where lookup.kind == .notFound {
            return explained(.notFound, "the folder \(parent.rawValue) does not exist")
        } catch {}
        return error
    }
}
