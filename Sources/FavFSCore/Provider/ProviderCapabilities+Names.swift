/// Names of capabilities for people (`favfs remote test`, logs).
extension ProviderCapabilities {
    /// Every capability with its name, in a stable order.
    public static let named: [(capability: ProviderCapabilities, name: String)] = [
        (.write, "write"), (.rename, "rename"), (.delete, "delete"), (.createFolder, "create-folder"),
        (.symlinks, "symlinks"), (.quota, "quota"), (.rangedReads, "ranged-reads"), (.versions, "versions"),
        (.serverSideCopy, "server-side-copy"), (.partialReadsCostAConnection, "partial-reads-cost-a-connection"),
        (.listingsMayLeaveOutDotNames, "listings-may-leave-out-dot-names"), (.connectionsCostALogin, "connections-cost-a-login"),
    ]

    /// The names of the capabilities in this set, e.g. `["write", "rename", "ranged-reads"]`.
    public var names: [String] {
        Self.named.filter { contains($0.capability) }.map(\.name)
    }
}
