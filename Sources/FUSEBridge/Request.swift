import CFuse
import FavFSCore
import Foundation

/// A FUSE request handed to a Task: every request gets exactly one reply, also on error and on
/// a deadline. Whoever replies first wins; a later reply (the network work finishing after the
/// deadline answered) is dropped, never sent for a freed request.
struct Request: @unchecked Sendable {
    let raw: fuse_req_t
    private let gate = ReplyGate()

    init(raw: fuse_req_t) { self.raw = raw }

    /// Replies with `send` unless the request was answered already; false when it was (the
    /// caller then undoes what the reply would have handed over, e.g. closes a new handle).
    @discardableResult
    func reply(_ send: (fuse_req_t) -> Void) -> Bool {
        guard gate.claim() else { return false }
        gate.cancelTimer()
        InterruptTable.shared.remove(gate.registeredInterruptKey)
        send(raw)
        return true
    }

    /// Answers `EINTR` at once when the caller is interrupted (a signal: Ctrl-C, a kill), so
    /// the program is not held until the server answers. libfuse calls the callback with the
    /// request's own key; a key no longer in the table (answered meanwhile) is ignored, so no
    /// pointer to Swift memory ever reaches C.
    ///
    /// An interrupt that came before this call makes libfuse call the callback from inside
    /// `fuse_req_interrupt_func`, which unlocks the request's mutex after the callback returns:
    /// a reply there would free the request first, and that unlock would write into freed
    /// memory (heap corruption, seen as a damaged SQLite page cache and glibc aborts). So the
    /// callback only notes such an early interrupt, and the reply is sent here, after libfuse
    /// returned. An interrupt that comes later is answered in the callback, where libfuse holds
    /// a reference to the request until it has unlocked it.
    func answerInterrupts() {
        let key = InterruptTable.shared.add(self)
        gate.beginRegistration(interruptKey: key)
        fuse_req_interrupt_func(raw, { _, data in
            guard let request = InterruptTable.shared.take(UInt(bitPattern: data)) else { return }
            if request.gate.interruptedWhileRegistering() { return }
            if request.gate.claim() {
                request.gate.cancelTimer()
                fuse_reply_err(request.raw, EINTR)
            }
        }, UnsafeMutableRawPointer(bitPattern: key))
        if gate.endRegistration(), gate.claim() {
            gate.cancelTimer()
            fuse_reply_err(raw, EINTR)
        }
    }

    func fail(_ errno: Int32) { reply { fuse_reply_err($0, errno) } }
    func fail(_ error: any Error) { fail(ErrnoMapping.errno(for: error)) }
    func ok() { fail(0) }

    /// Answers `ETIMEDOUT` if nothing else answered within `seconds` (0: never). The work goes
    /// on; what it brings later (a listing, a download, an upload) is kept, only its reply is
    /// dropped. A program on a hung server gets an answer instead of waiting in D state.
    func answerWithin(_ seconds: Double, what: @autoclosure @escaping @Sendable () -> String, log: @escaping @Sendable (String) -> Void) {
        guard seconds > 0 else { return }
        let me = self
        // Cancelled by the reply, so a cold read leaves no deadline behind per request.
        gate.setTimer(DeadlineTimer.shared.add(after: seconds) {
            if me.gate.claim() {
                InterruptTable.shared.remove(me.gate.registeredInterruptKey)
                log("\(what()): no answer from the remote within \(seconds) s; answered ETIMEDOUT (the work goes on in the background)")
                fuse_reply_err(me.raw, ETIMEDOUT)
            }
        })
    }
}

/// Set once, by the first reply.
final class ReplyGate: @unchecked Sendable {
    private let lock = NSLock()
    private var answered = false
    /// The request's key in `InterruptTable` (0: none); set before the work starts.
    private var interruptKey: UInt = 0
    /// Inside `fuse_req_interrupt_func` (see `Request.answerInterrupts`), and whether the
    /// callback ran in there.
    private var registering = false
    private var earlyInterrupt = false

    var registeredInterruptKey: UInt { lock.withLock { interruptKey } }

    func beginRegistration(interruptKey key: UInt) {
        lock.withLock { interruptKey = key; registering = true }
    }

    /// Called by the interrupt callback: true (and noted) when it runs inside the registration,
    /// where it must not reply.
    func interruptedWhileRegistering() -> Bool {
        lock.withLock {
            if registering { earlyInterrupt = true }
            return registering
        }
    }

    /// Ends the registration; true when an interrupt came before it (reply EINTR now).
    func endRegistration() -> Bool {
        lock.withLock {
            registering = false
            return earlyInterrupt
        }
    }
    /// The deadline's key in `DeadlineTimer` (0: none).
    private var timer: UInt = 0

    /// The deadline's timer; cancelled at once if the request was answered meanwhile.
    func setTimer(_ key: UInt) {
        let done = lock.withLock { () -> Bool in
            if answered { return true }
            timer = key
            return false
        }
        if done { DeadlineTimer.shared.cancel(key) }
    }

    func cancelTimer() {
        DeadlineTimer.shared.cancel(lock.withLock { () -> UInt in defer { timer = 0 }; return timer })
    }

    /// True for the first caller only.
    func claim() -> Bool {
        lock.withLock {
            if answered { return false }
            answered = true
            return true
        }
    }
}

/// Requests that can be interrupted, by key (libfuse hands the key back to the callback).
final class InterruptTable: @unchecked Sendable {
    static let shared = InterruptTable()
    private let lock = NSLock()
    private var requests: [UInt: Request] = [:]
    private var next: UInt = 1

    func add(_ request: Request) -> UInt {
        lock.withLock {
            let key = next
            next += 1
            requests[key] = request
            return key
        }
    }

    func take(_ key: UInt) -> Request? { lock.withLock { requests.removeValue(forKey: key) } }

    func remove(_ key: UInt) {
        guard key != 0 else { return }
        _ = lock.withLock { requests.removeValue(forKey: key) }
    }
}
