/// Names and paths OneDrive will not save ("Restrictions and limitations in OneDrive and
/// SharePoint"): the characters `" * : < > ? / \ |`, a leading or trailing space, a trailing
/// dot, the reserved names (`.lock`, `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`,
/// `desktop.ini`), `_vti_` anywhere in a name, a name starting with `~$`, and a decoded path
/// of more than 400 characters. Names are compared without case.
enum OneDriveNames {
    static let forbiddenCharacters: Set<Character> = ["\"", "*", ":", "<", ">", "?", "/", "\\", "|"]
    static let reserved: Set<String> = {
        var names: Set<String> = [".lock", "con", "prn", "aux", "nul", "desktop.ini"]
        for i in 0...9 { names.insert("com\(i)"); names.insert("lpt\(i)") }
        return names
    }()
    /// The longest path (from the drive's root, folders and name) OneDrive stores.
    static let maxPathLength = 400

    /// Why OneDrive would refuse `name`, or nil.
    static func problem(_ name: String) -> String? {
        if let c = name.first(where: { forbiddenCharacters.contains($0) }) {
            return "OneDrive does not allow the character '\(c)' in a name (nor any of \" * : < > ? / \\ |)"
        }
        if name.hasPrefix(" ") || name.hasSuffix(" ") { return "OneDrive does not allow a name that starts or ends with a space" }
        if name.hasSuffix(".") { return "OneDrive does not allow a name that ends with a dot" }
        let lower = name.lowercased()
        if reserved.contains(lower) { return "'\(name)' is a name OneDrive reserves" }
        if lower.contains("_vti_") { return "OneDrive does not allow '_vti_' in a name" }
        if name.hasPrefix("~$") { return "OneDrive does not allow a name that starts with ~$" }
        return nil
    }
}
