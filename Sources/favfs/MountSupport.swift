import Foundation
import Logging

/// Keeps signal sources alive for the process's lifetime.
enum SignalSources {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    static func keep(_ s: DispatchSourceSignal) { sources.append(s) }
}

/// Runs a blocking function on its own thread; its result can be awaited.
enum LoopThread {
    static func start(_ body: @escaping @Sendable () -> Int32) -> Task<Int32, Never> {
        Task.detached {
            await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
                Thread.detachNewThread { c.resume(returning: body()) }
            }
        }
    }
}

/// Whether a new mount answers: stat of its root, from a thread that may block in the kernel.
enum MountProbe {
    static func answers(_ mountpoint: String, timeout: Double) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let once = Once(c)
            Thread.detachNewThread {
                var st = stat()
                // A stat that reaches our getattr has st_ino 1 (the FUSE root).
                let deadline = Date().addingTimeInterval(timeout)
                while Date() < deadline {
                    if stat(mountpoint, &st) == 0 && st.st_ino == 1 { once.resume(true); return }
                    usleep(20_000)
                }
                once.resume(false)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout + 1) { once.resume(false) }
        }
    }

    final class Once: @unchecked Sendable {
        private var c: CheckedContinuation<Bool, Never>?
        private let lock = NSLock()
        init(_ c: CheckedContinuation<Bool, Never>) { self.c = c }
        func resume(_ v: Bool) { lock.withLock { c?.resume(returning: v); c = nil } }
    }
}

/// The kernel sends reads of at most `read_ahead_kb` (128 KiB by default) ahead of a sequential
/// reader; root may raise it per mount, which lets large reads arrive in 1 MiB requests.
enum BackingDevice {
    static func raiseReadahead(mountpoint: String, kilobytes: Int, log: Logger) {
        guard getuid() == 0 else { return }
        var st = stat()
        guard stat(mountpoint, &st) == 0 else { return }
        let dev = UInt64(st.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        let path = "/sys/class/bdi/\(major):\(minor)/read_ahead_kb"
        do { try "\(kilobytes)\n".write(toFile: path, atomically: false, encoding: .utf8) }
        catch { log.debug("cannot raise \(path): \(error)") }
    }
}
