/// A part of the core that works on one remote: the errors it makes name the remote and the
/// item (`error(.notFound, id, "no such item")`), as the provider's own errors do.
protocol ReportsRemoteErrors {
    var provider: any Provider { get }
}

extension ReportsRemoteErrors {
    func error(_ kind: ProviderError.Kind, _ id: ItemIdentifier, _ detail: String) -> ProviderError {
        ProviderError(kind, remote: provider.remoteDescription, path: id.rawValue, detail: detail)
    }
}
