import Foundation

/// Lets plain users open `/dev/fuse` for a test (a stock desktop has it 0666; the machines
/// here have 0600), and puts the mode back.
public final class PlainUserFUSE {
    private let original: mode_t

    public init() throws {
        var st = stat()
        guard stat("/dev/fuse", &st) == 0 else { throw ShellError("no /dev/fuse: \(String(cString: strerror(errno)))") }
        original = st.st_mode & 0o7777
        guard chmod("/dev/fuse", 0o666) == 0 else { throw ShellError("cannot make /dev/fuse 0666: \(String(cString: strerror(errno)))") }
    }

    public func restore() { chmod("/dev/fuse", original) }
}
