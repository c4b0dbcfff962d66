import Foundation

/// One dispatcher per data dir (DESIGN §7): an exclusive `flock` on
/// `<data dir>/dispatch.lock`, held while delivering (never while `run` sleeps).
/// The kernel drops it when the process dies, so a crash leaves no stale lock.
final class DispatchLock {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Takes the lock, waiting up to `wait` seconds; nil when another dispatcher kept it.
    static func acquire(dataDirectory: String, wait: Int) throws -> DispatchLock? {
        let path = dataDirectory + "/dispatch.lock"
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIError.runtime("\(path): cannot open the dispatch lock (\(String(cString: strerror(errno))))")
        }
        let deadline = Date().addingTimeInterval(TimeInterval(wait))
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return DispatchLock(descriptor: fd) }
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw CLIError.runtime("\(path): cannot lock (\(reason))")
            }
            if Date() >= deadline {
                close(fd)
                return nil
            }
            usleep(50_000)
        }
    }
}
