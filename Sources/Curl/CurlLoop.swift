import CCurl
import Foundation
import Logging

/// libcurl must be initialised once, before any other thread uses it.
private let curlGlobalInit: Void = {
    curl_global_init(favfs_global_all)
}()

/// The multi handle and the one thread that drives it. Everything that touches curl handles runs
/// on that thread; other threads only queue commands (under `lock`) and wake it.
final class CurlLoop: @unchecked Sendable {
    enum Command {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
        /// Unpauses a transfer whose growing upload body has more bytes (or ended).
        case resume(CurlTransfer)
    }

    private let multi: UnsafeMutableRawPointer
    private let options: TransportOptions
    private let lock = NSLock()
    // Guarded by `lock`.
    private var commands: [Command] = []
    private var stopping = false
    /// Set once the multi handle is freed: nothing may touch it after that.
    private var closed = false
    private var opened = 0

    // Loop thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Easy handles kept for reuse (reset before each transfer): saves setup per request.
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private let log = Logger(label: "favfs.curl")

    init(options: TransportOptions) {
        _ = curlGlobalInit
        self.options = options
        multi = curl_multi_init()
        let perHost = max(1, options.maxConnectionsPerHost)
        favfs_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
        // The connection cache must outlive single transfers for keep-alive reuse.
        favfs_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, perHost * 4))
        let thread = Thread { [self] in run() }
        thread.name = "favfs.curl"
        thread.start()
    }

    var connectionsOpened: Int { lock.withLock { opened } }

    /// Queues a command for the loop thread and wakes it.
    func submit(_ command: Command) {
        let accepted = lock.withLock { () -> Bool in
            guard !closed else { return false }
            commands.append(command)
            // Under the lock, so the loop cannot free the multi handle in between.
            curl_multi_wakeup(multi)
            return true
        }
        // The loop is gone (the transport was released): the loop never saw this transfer, so
        // resuming it from here cannot race with it.
        if !accepted, case .add(let transfer) = command { transfer.finishCancelled() }
    }

    /// Ends the loop thread once it has drained its queue; it frees the multi handle.
    func shutdown() {
        lock.withLock {
            stopping = true
            if !closed { curl_multi_wakeup(multi) }
        }
    }

    private func run() {
        if options.niceness != 0 {
            // who = 0 is the calling thread on Linux (nice is per thread): a background transfer thread yields the CPU to readers.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Int32(options.niceness))
        }
        // Whether the last wait ended on socket activity (see the wait below).
        var woken = false
        while true {
            let (batch, stop) = lock.withLock { () -> ([Command], Bool) in
                defer { commands.removeAll() }
                return (commands, stopping)
            }
            for command in batch { handle(command) }
            if stop { break }

            var running: Int32 = 0
            let mc = curl_multi_perform(multi, &running)
            if mc != CURLM_OK { log.error("curl_multi_perform: \(String(cString: curl_multi_strerror(mc)))") }
            collectFinished()

            var fds: Int32 = 0
            // Woken early by curl_multi_wakeup when a command arrives. libcurl 7.88 sets no timer
            // after an FTP server's EPSV/PASV reply on a reused connection: the data connection
            // is opened only at the next curl_multi_perform, a whole wait later (every file
            // after the first took 1 s more, `curl` itself too). While an FTP transfer runs,
            // the wait is short, and none right after activity: the perform that read the
            // EPSV reply is then followed at once by the one that connects (a wait of 5 ms
            // per data connection was most of the time of a small file over a reused
            // connection).
            let ftp = active.values.contains { $0.isFTP }
            _ = curl_multi_poll(multi, nil, 0, ftp ? (woken ? 0 : 5) : 1000, &fds)
            woken = fds > 0
        }
        // Nobody awaits anything once the transport is gone, but resume defensively.
        let late = lock.withLock { () -> [Command] in
            closed = true
            defer { commands.removeAll() }
            return commands
        }
        for case .add(let transfer) in late { transfer.finishCancelled() }
        for (_, transfer) in active { detach(transfer); transfer.finishCancelled() }
        active.removeAll()
        for easy in idleHandles { curl_easy_cleanup(easy) }
        curl_multi_cleanup(multi)
    }

    private func handle(_ command: Command) {
        switch command {
        case .add(let transfer):
            if transfer.isFinished { return }
            if transfer.cancelRequested { transfer.finishCancelled(); return }
            let easy = idleHandles.popLast() ?? curl_easy_init()!
            curl_easy_reset(easy)
            if let error = transfer.configure(easy) {
                transfer.detachEasy()
                idleHandles.append(easy)
                transfer.finish(.failure(error))
                return
            }
            let mc = curl_multi_add_handle(multi, easy)
            guard mc == CURLM_OK else {
                transfer.detachEasy()
                idleHandles.append(easy)
                transfer.finish(.failure(TransportError(kind: .other, code: Int(mc.rawValue),
                                                        message: String(cString: curl_multi_strerror(mc)),
                                                        url: transfer.safeURL)))
                return
            }
            active[easy] = transfer
            transfer.loop = self
        case .resume(let transfer):
            // After the read callback that paused it returned: commands run between performs.
            guard !transfer.isFinished, let easy = transfer.easy, active[easy] != nil else { return }
            curl_easy_pause(easy, favfs_pause_cont)
        case .cancel(let transfer):
            if transfer.isFinished { return }
            guard let easy = transfer.easy, active[easy] != nil else {
                // Not added yet: the add that follows finishes it.
                transfer.cancelRequested = true
                return
            }
            active[easy] = nil
            detach(transfer)
            transfer.finishCancelled()
        }
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let msg = curl_multi_info_read(multi, &left) {
            guard msg.pointee.msg == CURLMSG_DONE, let easy = msg.pointee.easy_handle else { continue }
            let code = favfs_msg_result(msg)
            guard let transfer = active.removeValue(forKey: easy) else { continue }
            var connects: Int = 0
            favfs_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
            lock.withLock { opened += connects }
            let result = transfer.result(code: code)
            detach(transfer)
            transfer.finish(result)
        }
    }

    /// Removes the transfer's easy handle from the multi and keeps it for reuse.
    private func detach(_ transfer: CurlTransfer) {
        guard let easy = transfer.easy else { return }
        curl_multi_remove_handle(multi, easy)
        transfer.detachEasy()
        if idleHandles.count < 64 { idleHandles.append(easy) } else { curl_easy_cleanup(easy) }
    }
}
