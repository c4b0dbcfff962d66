import BirthdayBuzz
import BuzzSystem
import Foundation

/// One dispatcher per data dir (docs/design/reminders.md): an exclusive `flock` on
/// `<data dir>/dispatch.lock`, held while delivering (never while `run` sleeps).
/// The kernel drops it when the process dies, so a crash leaves no stale lock.
/// `SQLiteLedger.deliveryLock(wait:)` hands it out.
public final class DispatchLock: DeliveryLock {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Why the lock file of `dataDirectory` cannot be opened, or nil (`doctor`
    /// asks without creating it).
    public static func problem(dataDirectory: String) -> String? {
        let path = dataDirectory + "/dispatch.lock"
        let fd = open(path, O_RDWR | O_CLOEXEC)
        if fd >= 0 {
            close(fd)
            return nil
        }
        return errno == ENOENT ? nil : openProblem(path: path, errno: errno)
    }

    /// The one-line reason, with the fix when the file belongs to someone else
    /// (root's, after `sudo buzz tick`).
    private static func openProblem(path: String, errno code: Int32) -> String {
        var text = "\(path): cannot open the dispatch lock (\(SystemError("open", errno: code).reason))"
        var info = stat()
        if code == EACCES || code == EPERM, stat(path, &info) == 0, info.st_uid != getuid() {
            let owner = getpwuid(info.st_uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(info.st_uid)"
            text += "; it belongs to \(owner) (a `sudo buzz …` run?): remove it with `sudo rm \(path)`, it is made again"
        }
        return text
    }

    /// Takes the lock, waiting up to `wait` seconds; nil when another dispatcher kept it.
    public static func acquire(dataDirectory: String, wait: Int) throws -> DispatchLock? {
        let path = dataDirectory + "/dispatch.lock"
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(openProblem(path: path, errno: errno)) }
        let deadline = Date().addingTimeInterval(TimeInterval(wait))
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return DispatchLock(descriptor: fd) }
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let reason = SystemError("flock").reason
                close(fd)
                throw StoreError("\(path): cannot lock (\(reason))")
            }
            if Date() >= deadline {
                close(fd)
                return nil
            }
            usleep(50_000)
        }
    }
}
