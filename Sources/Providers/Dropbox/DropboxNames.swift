/// Names Dropbox will not save. Its help centre says `/` and `\` are always disallowed; the
/// API answers `disallowed_name` for those, and rclone's years of use add DEL, a name ending in
/// a space, and names that are not valid UTF-8 (a Swift `String` always is). `< > : " | ? *`
/// and a trailing dot are only "not recommended" (Windows cannot have them): Dropbox keeps them.
enum DropboxNames {
    /// Why Dropbox would refuse `name`, or nil.
    static func problem(_ name: String) -> String? {
        if name.contains("\\") { return "Dropbox does not allow a backslash in a name" }
        if name.unicodeScalars.contains("\u{7F}") { return "Dropbox does not allow the DEL character in a name" }
        if name.hasSuffix(" ") { return "Dropbox does not allow a name that ends in a space" }
        if name == "." || name == ".." { return "'\(name)' is not a name Dropbox can store" }
        return nil
    }
}
