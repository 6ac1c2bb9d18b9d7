import Foundation
import Providers

/// The calling convention of `mount.fuse3` (and so of `mount -t fuse.favfs` and `/etc/fstab`):
/// `favfs SOURCE MOUNTPOINT [-o opt,opt=value,…]`, turned into `favfs mount MOUNTPOINT
/// --remote SOURCE …`. SOURCE is a URL or a remote's name. favfs's own options are named as on
/// the command line with `_` for `-` (`cache_dir=…`); the options mount(8) passes to every
/// file system are ignored; any other `KEY=VALUE` is a remote option (`--option KEY=VALUE`).
enum MountHelperArguments {
    /// Options mount(8), mount.fuse3 and fstab use for every file system: meaningless here.
    static let generic: Set<String> = [
        "rw", "defaults", "auto", "noauto", "nouser", "owner", "group", "_netdev", "nofail", "async", "sync",
        "atime", "noatime", "relatime", "strictatime", "nodiratime", "diratime", "lazytime",
        "default_permissions", "silent", "loud",
    ]
    /// The kernel's per-mount flags, passed on as mount(8) defines them.
    static let kernelFlags: Set<String> = ["exec", "noexec", "suid", "nosuid", "dev", "nodev"]
    static let flags: [String: String] = ["ro": "--read-only", "allow_other": "--allow-other", "no_xattrs": "--no-xattrs", "no_thumbnails": "--no-thumbnails", "no_notifications": "--no-notifications", "foreground": "--foreground"]
    static let valued: Set<String> = [
        "cache_dir", "cache_size", "dir_cache_time", "poll_interval", "attr_timeout", "timeout", "log_level", "uid", "gid", "umask", "fsync",
    ]

    /// The subcommand form of `arguments` (without the program name), or nil when they are
    /// not in the helper's form (a subcommand, an option, or fewer than two operands).
    static func translate(_ arguments: [String], subcommands: Set<String>) throws -> [String]? {
        guard arguments.count >= 2, let source = arguments.first, !source.hasPrefix("-"), !subcommands.contains(source),
              !arguments[1].hasPrefix("-") else { return nil }
        // mount(8) always passes -o (at least "rw"); without it and without a URL, this is more
        // likely a mistyped command ("favfs moutn …"), which the parser then names.
        guard source.contains("://") || arguments.dropFirst(2).contains(where: { $0.hasPrefix("-o") }) else { return nil }
        // Silent on success, as mount(8) helpers are (sshfs).
        var out = ["mount", arguments[1], "--remote", remoteName(source), "--quiet"]
        var rest = arguments.dropFirst(2)
        // exec/suid/dev as the options say, in order: `user` and `users` imply noexec, nosuid
        // and nodev, which a later `exec` (etc.) overrides (mount(8)).
        var kernel: [String: Bool] = [:]
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
                if option == "user" || option == "users" {
                    for flag in ["exec", "suid", "dev"] { kernel[flag] = false }
                } else if kernelFlags.contains(option) {
                    kernel[option.hasPrefix("no") ? String(option.dropFirst(2)) : option] = !option.hasPrefix("no")
                } else {
                    out += try translate(option: option)
                }
            }
        }
        let set = ["exec", "suid", "dev"].compactMap { flag in kernel[flag].map { $0 ? flag : "no" + flag } }
        if !set.isEmpty { out += ["--kernel-flags", set.joined(separator: ",")] }
        return out
    }

    /// mount(8) turns a SOURCE that names a folder in its working folder into that folder's
    /// absolute path (`nas` in an fstab line, run from a home folder holding a `nas` folder,
    /// arrives as `/home/me/nas`). A remote's name has no slash: an absolute path that is not a
    /// URL means the remote named by its last component.
    static func remoteName(_ source: String) -> String {
        guard source.hasPrefix("/"), !source.contains("://") else { return source }
        let last = (source as NSString).lastPathComponent
        return StoredRemote.isValidName(last) ? last : source
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
