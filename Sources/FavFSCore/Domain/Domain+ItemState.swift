import Foundation

/// An item's state as extended attributes (`getfattr -d -m - FILE`): `ItemStatus` answers.
extension Domain {
    public static let stateAttribute = "user.favfs.state"
    public static let pinAttribute = "user.favfs.pin"
    public static let etagAttribute = "user.favfs.etag"

    /// The names `listxattr` gives for `id` (nil: no such item).
    public func extendedAttributeNames(of id: ItemIdentifier) -> [String]? { itemStatus.extendedAttributeNames(of: id) }

    /// One attribute's value; nil when the item has no such attribute.
    public func extendedAttribute(_ name: String, of id: ItemIdentifier) -> String? { itemStatus.extendedAttribute(name, of: id) }
}
