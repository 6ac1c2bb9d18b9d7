import Foundation

/// Uploads that cannot succeed as they are. A folder deleted on the server under a file written
/// here is re-created (the file stays where the user put it); any other permanent refusal
/// (denied, too large, no space at the server, a name it will not take) ends the upload: the
/// content is kept in `CACHEDIR/lost+found`, the journal row goes, and the item shows the
/// server's state again. Nothing is retried forever, and unmount never waits for it.
extension Domain {
    /// Re-creates the folders above `id` that are missing at the remote, top down. True when
    /// at least one was created (the upload is worth trying again).
    func recreateMissingFolders(above id: ItemIdentifier) async -> Bool {
        guard let w = try? writer(id) else { return false }
        var missing: [ItemIdentifier] = []
        var folder = id.parent
        while let f = folder, f != .rootContainer {
            do {
                let item = try await provider.item(for: f)
                if item.kind != .folder { return false }
                break
            } catch let e as ProviderError where e.kind == .notFound {
                missing.append(f)
                folder = f.parent
            } catch {
                return false
            }
        }
        guard !missing.isEmpty else { return false }
        for f in missing.reversed() {
            do {
                var created = try await w.createFolder(f)
                created.kind = .folder
                setPlaceholder(created)
            } catch let e as ProviderError where e.kind == .exists {
                continue  // made by someone else meanwhile: as good
            } catch {
                log.error("cannot re-create the folder \(f) for the upload of \(id): \(error)")
                return false
            }
        }
        log.warning("the folder \(missing.last!) was deleted on \(provider.remoteDescription) while \(id) waited for its upload: re-created \(missing.count) folder(s) to keep it")
        return true
    }

    /// Ends an upload that failed for good: the content goes to lost+found (when it cannot be
    /// kept there, it stays dirty in the cache instead, as before), waiters get `error`.
    func abandonUpload(_ id: ItemIdentifier, _ error: ProviderError) async {
        guard let kept = content.keepInLostAndFound(id) else {
            log.error("upload of \(id) failed: \(error); it could not be kept in lost+found, so the content stays in the cache and is tried again at the next change or mount")
            finishFailed(id, error)
            return
        }
        let waiters = lock.withLock { dirty.removeValue(forKey: id)?.waiters ?? [] }
        try? store.deleteJournal(id)
        content.remove(id)
        log.error("upload of \(id) failed for good: \(error). The content written here is kept as \(kept.path); the file shows the server's state again")
        await refreshItem(id)
        if let parent = id.parent { folderChanged(parent) }
        for w in waiters { w.resume(throwing: error) }
    }
}

extension ProviderError {
    /// The server refused the upload and would refuse it again: retrying cannot help.
    var isPermanentRefusal: Bool {
        switch kind {
        case .denied, .tooLarge, .noSpace, .invalidName, .nameTooLong, .notSupported, .exists, .notFound, .notAFolder, .isAFolder:
            return true
        default:
            return false
        }
    }
}
