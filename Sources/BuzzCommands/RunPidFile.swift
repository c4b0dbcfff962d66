import BuzzSystem
import Foundation
import Synchronization

/// `<data dir>/run.pid`: which process is the `buzz run` of a data dir.
///
/// `run` holds an exclusive `flock` on the file for its whole life, so a second
/// `run` on the same data dir is refused however the first one started, and a
/// crash leaves no lock behind (the kernel drops it); a stale file is simply
/// taken over. The pid is written only once `run` answers SIGHUP, so a command
/// that signals it (`notifyRunningDaemon`) never kills a daemon still starting.
final class RunPidFile: Sendable {
    let path: String
    private let descriptor: Int32
    private let released = Mutex(false)

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        release()
    }

    /// The pid file of `dataDirectory`.
    static func path(dataDirectory: String) -> String { dataDirectory + "/run.pid" }

    /// Takes the pid file for this process (created 0600, emptied).
    ///
    /// Another live `run` on the same data dir is a request error (status 2):
    /// nothing was done and retrying cannot help until the user stops one of
    /// them, and the systemd unit's `RestartPreventExitStatus=2` keeps systemd
    /// from restarting into the same refusal (it does the same for a broken config).
    static func claim(dataDirectory: String) throws -> RunPidFile {
        let path = path(dataDirectory: dataDirectory)
        // A run that exits unlinks the file while holding its lock: when the
        // file we locked is no longer the one at `path`, lock the new one.
        for _ in 0..<8 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else {
                throw CLIError.runtime("\(path): cannot open the pid file (\(SystemError("open").reason))")
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let reason = errno
                let holder = readPid(fd)
                close(fd)
                if reason == EWOULDBLOCK {
                    let who = holder.map { "(pid \($0)) " } ?? ""
                    throw CLIError.request("another `buzz run` \(who)is already running for \(dataDirectory); stop it first")
                }
                throw CLIError.runtime("\(path): cannot lock the pid file (\(SystemError("flock", errno: reason).reason))")
            }
            var opened = stat(), named = stat()
            guard fstat(fd, &opened) == 0, stat(path, &named) == 0,
                  opened.st_dev == named.st_dev, opened.st_ino == named.st_ino else {
                close(fd)
                continue
            }
            fchmod(fd, 0o600)
            ftruncate(fd, 0)
            return RunPidFile(path: path, descriptor: fd)
        }
        throw CLIError.runtime("\(path): the pid file keeps changing; is another `buzz run` starting and stopping?")
    }

    /// Writes this process's id: call it once every signal `run` answers is trapped.
    func publish() throws {
        let text = Array("\(getpid())\n".utf8)
        guard ftruncate(descriptor, 0) == 0, pwrite(descriptor, text, text.count, 0) == text.count else {
            throw CLIError.runtime("\(path): cannot write the pid file (\(SystemError("pwrite").reason))")
        }
    }

    /// Removes the file and drops the lock (idempotent).
    func release() {
        let first = released.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        unlink(path)  // still ours: nobody else can hold the lock on it
        close(descriptor)
    }

    /// The pid of the `buzz run` of `dataDirectory` when one is alive, else nil.
    ///
    /// Checks that the process exists, is this user's, and is `buzz … run`
    /// (`/proc/PID/cmdline`), so a stale file whose pid was reused by some other
    /// program is never signalled.
    static func runningDaemon(dataDirectory: String) -> pid_t? {
        let fd = open(path(dataDirectory: dataDirectory), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        let pid = readPid(fd)
        close(fd)
        guard let pid, pid > 1, pid != getpid(), kill(pid, 0) == 0 else { return nil }
        guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let arguments = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let program = arguments.first, (program as NSString).lastPathComponent.contains("buzz"),
              arguments.dropFirst().contains("run") else { return nil }
        return pid
    }

    private static func readPid(_ fd: Int32) -> pid_t? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return pid_t(text)
    }
}

/// Tells a running `buzz run` of `dataDirectory` that what is due changed
/// (SIGHUP: it reloads and re-plans at once). Silent when none runs.
///
/// Call it after a command has committed a change (`import`, `include`, `skip`,
/// `set-birthday`, `clear-birthday`, `set-anniversary`, `clear-anniversary`,
/// `set`, `note`, `gift`, `retry`).
func notifyRunningDaemon(dataDirectory: String) {
    guard let pid = RunPidFile.runningDaemon(dataDirectory: dataDirectory) else { return }
    kill(pid, SIGHUP)
}
