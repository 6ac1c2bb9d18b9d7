/// The calling convention of `mount.fuse3` (and so of `mount -t fuse.favfs` and `/etc/fstab`):
/// `favfs SOURCE MOUNTPOINT [-o opt,opt=value,…]`, turned into `favfs mount MOUNTPOINT
/// --remote SOURCE …`. SOURCE is a URL or a remote's name. favfs's own options are named as on
/// the command line with `_` for `-` (`cache_dir=…`); the options mount(8) passes to every
/// file system are ignored; any other `KEY=VALUE` is a remote option (`--option KEY=VALUE`).
enum MountHelperArguments {
    /// Options mount(8), mount.fuse3 and fstab use for every file system: meaningless here.
    static let generic: Set<String> = [
        "rw", "defaults", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "auto", "noauto",
        "user", "users", "nouser", "owner", "group", "_netdev", "nofail", "async", "sync",
        "atime", "noatime", "relatime", "strictatime", "nodiratime", "diratime", "lazytime",
        "default_permissions", "silent", "loud",
    ]
    static let flags: [String: String] = ["ro": "--read-only", "allow_other": "--allow-other", "no_xattrs": "--no-xattrs", "no_thumbnails": "--no-thumbnails", "foreground": "--foreground"]
    static let valued: Set<String> = [
        "cache_dir", "cache_size", "dir_cache_time", "poll_interval", "attr_timeout", "timeout", "log_level", "uid", "gid", "umask",
    ]

    /// The subcommand form of `arguments` (without the program name), or nil when they are
    /// not in the helper's form (a subcommand, an option, or fewer than two operands).
    static func translate(_ arguments: [String], subcommands: Set<String>) throws -> [String]? {
        guard arguments.count >= 2, let source = arguments.first, !source.hasPrefix("-"), !subcommands.contains(source),
              !arguments[1].hasPrefix("-") else { return nil }
        // mount(8) always passes -o (at least "rw"); without it and without a URL, this is more
        // likely a mistyped command ("favfs moutn …"), which the parser then names.
        guard source.contains("://") || arguments.dropFirst(2).contains(where: { $0.hasPrefix("-o") }) else { return nil }
        var out = ["mount", arguments[1], "--remote", source]
        var rest = arguments.dropFirst(2)
        while let arg = rest.popFirst() {
            let list: String
            if arg == "-o" {
                guard let next = rest.popFirst() else { throw CLIError("favfs: -o needs a list of options", status: .usage) }
                list = next
            } else if arg.hasPrefix("-o") {
                list = String(arg.dropFirst(2))
            } else if arg == "-f" {
                out.append("--foreground"); continue
            } else {
                throw CLIError("favfs: unexpected argument '\(arg)' (the form is: favfs SOURCE MOUNTPOINT -o OPTIONS)", status: .usage)
            }
            for option in list.split(separator: ",").map(String.init) where !option.isEmpty {
                out += try translate(option: option)
            }
        }
        return out
    }

    private static func translate(option: String) throws -> [String] {
        let key = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
        let value = option.contains("=") ? String(option[option.index(after: option.firstIndex(of: "=")!)...]) : nil
        if generic.contains(key) || key.hasPrefix("x-") || key == "comment" { return [] }
        if let flag = flags[key], value == nil { return [flag] }
        if valued.contains(key), let value { return ["--" + key.replacingOccurrences(of: "_", with: "-"), value] }
        if let value, !value.isEmpty { return ["--option", "\(key)=\(value)"] }
        throw CLIError("favfs: unknown mount option '\(option)' (favfs knows ro, allow_other, \(valued.sorted().map { $0 + "=…" }.joined(separator: ", ")), and remote options as KEY=VALUE)",
                       status: .usage)
    }
}
