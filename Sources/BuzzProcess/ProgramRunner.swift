#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import BuzzSystem
import CBuzzLinux
import Foundation
import Synchronization

/// Runs a program the config names — an `exec` plugin or a `password_command` —
/// under the safety rules of docs/design/channels.md.
///
/// - argv only, never a shell; a bare name is looked up in the `PATH` of the
///   program's own (minimal) environment.
/// - The environment is `PATH`, `HOME` and `LANG` from this process plus the
///   channel's own table — nothing else of ours (tokens, passwords) leaks.
/// - Standard input gets the bytes given, or `/dev/null` (immediate end of file)
///   when there are none; standard output and standard error are read to the
///   end but kept only up to `outputLimit` bytes each, so a chatty child never
///   blocks and never fills our memory.
/// - The program runs in its own process group; on timeout (or task
///   cancellation) the whole group gets SIGTERM, then SIGKILL after
///   `terminationGrace` seconds, so whatever it started goes too.
/// - SIGPIPE is ignored in this process: a child that exits before reading its
///   input cannot kill us.
///
/// ```swift
/// let runner = ProgramRunner(arguments: ["pass", "show", "mail"], timeout: 10)
/// let result = try runner.runSynchronously()
/// guard result.succeeded else { … }
/// ```
public struct ProgramRunner: Sendable {
    /// The program and its arguments; `arguments[0]` is a path, or a name looked up in `PATH`.
    public var arguments: [String]
    /// Exactly the environment the program gets, in order.
    public var environment: [(name: String, value: String)]
    /// Seconds the program may run before its process group is stopped.
    public var timeout: Double
    /// Bytes kept of standard output (its beginning) and of standard error (its end).
    public var outputLimit: Int
    /// Seconds between SIGTERM and SIGKILL when the program is stopped.
    public var terminationGrace: Double

    /// A runner for `arguments` with the minimal environment built from `parentEnvironment` plus `extraEnvironment`.
    public init(arguments: [String],
                extraEnvironment: [(name: String, value: String)] = [],
                timeout: Double,
                outputLimit: Int = 64 * 1024,
                terminationGrace: Double = 2,
                parentEnvironment: [String: String] = ProcessInfo.processInfo.environment) {
        self.arguments = arguments
        self.environment = Self.minimalEnvironment(extra: extraEnvironment, parent: parentEnvironment)
        self.timeout = timeout
        self.outputLimit = max(0, outputLimit)
        self.terminationGrace = max(0, terminationGrace)
    }

    /// The environment a program we start gets: `PATH`, `HOME` and `LANG` taken from
    /// `parent` (with a standard `PATH` when it has none), then `extra`, whose
    /// entries replace those of the same name.
    public static func minimalEnvironment(extra: [(name: String, value: String)],
                                          parent: [String: String]) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = [("PATH", parent["PATH"] ?? defaultSearchPath)]
        for name in ["HOME", "LANG"] {
            if let value = parent[name] { result.append((name, value)) }
        }
        for entry in extra {
            if let index = result.firstIndex(where: { $0.name == entry.name }) {
                result[index].value = entry.value
            } else {
                result.append(entry)
            }
        }
        return result
    }

    /// The `PATH` used when this process has none.
    public static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

    /// The file that will be executed: `arguments[0]` itself when it holds a `/`,
    /// else the first executable file of that name in the environment's `PATH`.
    /// Throws `ProgramError` (`.notFound`, `.notExecutable`, `.invalidCommand`).
    public func resolvedProgram() throws(ProgramError) -> String {
        guard let program = arguments.first, !program.isEmpty else {
            throw ProgramError(.invalidCommand, program: "", detail: "the command is empty")
        }
        let searchPath = environment.last(where: { $0.name == "PATH" })?.value ?? Self.defaultSearchPath
        return try Self.resolve(program, searchPath: searchPath)
    }

    /// Finds `program` as `execvp` would, but skips empty and relative `PATH`
    /// entries (a plugin is never picked up from whatever the current folder is).
    public static func resolve(_ program: String, searchPath: String) throws(ProgramError) -> String {
        if program.contains("/") {
            switch FileCheck(program) {
            case .executable: return program
            case .missing: throw ProgramError(.notFound, program: program, detail: "no such file")
            case .directory: throw ProgramError(.notExecutable, program: program, detail: "it is a folder")
            case .notExecutable: throw ProgramError(.notExecutable, program: program, detail: "it is not executable (chmod u+x)")
            }
        }
        var foundNotExecutable: String?
        for entry in searchPath.split(separator: ":") where entry.hasPrefix("/") {
            let directory = String(entry)
            let candidate = directory.hasSuffix("/") ? directory + program : directory + "/" + program
            switch FileCheck(candidate) {
            case .executable: return candidate
            case .notExecutable: foundNotExecutable = foundNotExecutable ?? candidate
            case .missing, .directory: continue
            }
        }
        if let candidate = foundNotExecutable {
            throw ProgramError(.notExecutable, program: program, detail: "\(candidate) is not executable (chmod u+x)")
        }
        throw ProgramError(.notFound, program: program, detail: "not found in PATH (\(searchPath))")
    }

    /// Refuses a folder whose files name programs we run (the config folder, the
    /// template folder) when someone else could change it: writable by group or
    /// others, or owned by another user than the current one or root — as ssh
    /// does. Throws a `ProgramError` (`.untrustedDirectory`) that says how to fix it.
    public static func checkTrusted(directory: String) throws(ProgramError) {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            let reason = SystemError("stat").reason
            throw ProgramError(.untrustedDirectory, program: directory, detail: "cannot check folder \(directory): \(reason)")
        }
        let uid = getuid()
        if info.st_uid != uid && info.st_uid != 0 {
            throw ProgramError(.untrustedDirectory, program: directory, detail:
                "refusing to run programs named in \(directory): it is owned by uid \(info.st_uid), not by you (uid \(uid)) or root; fix: chown \(uid) \(shellQuoted(directory))")
        }
        if info.st_mode & (mode_t(S_IWGRP) | mode_t(S_IWOTH)) != 0 {
            throw ProgramError(.untrustedDirectory, program: directory, detail:
                "refusing to run programs named in \(directory): it is writable by group or others; fix: chmod go-w \(shellQuoted(directory))")
        }
    }

    /// Runs the program to its end, on a thread of its own (never on the Swift
    /// cooperative pool). Cancelling the task stops the program's process group
    /// and throws `CancellationError`. Throws `ProgramError` when it cannot start.
    public func run(standardInput: [UInt8]? = nil) async throws -> ProgramResult {
        try Task.checkCancellation()
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ProgramResult, any Error>) in
                let thread = Thread {
                    continuation.resume(with: Result { try self.execute(standardInput: standardInput, cancellation: cancellation) })
                }
                thread.name = "ProgramRunner"
                thread.start()
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Runs the program to its end on the calling thread, which blocks; for
    /// synchronous callers such as `password_command`. Never call it from the
    /// cooperative pool. Throws `ProgramError` when the program cannot start.
    public func runSynchronously(standardInput: [UInt8]? = nil) throws(ProgramError) -> ProgramResult {
        do {
            return try execute(standardInput: standardInput, cancellation: nil)
        } catch let error as ProgramError {
            throw error
        } catch {
            throw ProgramError(.systemCallFailed, program: arguments.first ?? "", detail: "\(error)")
        }
    }
}

// MARK: - Running

extension ProgramRunner {
    /// SIGPIPE is ignored once per process (docs/design/channels.md); writes to a closed pipe then fail with EPIPE.
    private static let ignoreBrokenPipes: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    private func execute(standardInput: [UInt8]?, cancellation: CancellationFlag?) throws -> ProgramResult {
        _ = Self.ignoreBrokenPipes
        let path = try resolvedProgram()
        let program = arguments[0]
        guard !arguments.contains(where: { $0.utf8.contains(0) }),
              !environment.contains(where: { $0.name.isEmpty || $0.name.contains("=") || $0.name.utf8.contains(0) || $0.value.utf8.contains(0) }) else {
            throw ProgramError(.invalidCommand, program: program, detail: "an argument or environment entry holds a NUL byte or a bad name")
        }

        var descriptors = Descriptors()
        defer { descriptors.closeAll() }

        let output = try makePipe(program)
        descriptors.outputRead = output.read
        descriptors.childOutput = output.write
        let error = try makePipe(program)
        descriptors.errorRead = error.read
        descriptors.childError = error.write
        if standardInput != nil {
            let input = try makePipe(program)
            descriptors.childInput = input.read
            descriptors.inputWrite = input.write
        }

        let pid = try spawn(path: path, program: program, descriptors: descriptors)
        descriptors.closeChildEnds()
        for fd in [descriptors.outputRead, descriptors.errorRead, descriptors.inputWrite] where fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }

        return try supervise(pid: pid, program: program, standardInput: standardInput ?? [],
                             descriptors: &descriptors, cancellation: cancellation)
    }

    private func makePipe(_ program: String) throws(ProgramError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        // Both ends close-on-exec from birth: a program another thread starts meanwhile cannot inherit them.
        guard CBuzzLinux_pipe2(&fds, O_CLOEXEC) == 0 else {
            let error = SystemError("pipe2")
            throw ProgramError(.systemCallFailed, program: program, detail: "cannot make a pipe: \(error.reason)",
                               underlyingErrno: error.code)
        }
        return (fds[0], fds[1])
    }

    private func spawn(path: String, program: String, descriptors: Descriptors) throws(ProgramError) -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own process group (to stop it whole), every signal back to its default
        // (we ignore SIGPIPE; a service may ignore SIGTERM to watch it), nothing blocked.
        _ = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        _ = posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigfillset(&defaults)
        _ = posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        _ = posix_spawnattr_setsigmask(&attributes, &mask)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if descriptors.childInput >= 0 {
            _ = posix_spawn_file_actions_adddup2(&actions, descriptors.childInput, 0)
        } else {
            _ = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        _ = posix_spawn_file_actions_adddup2(&actions, descriptors.childOutput, 1)
        _ = posix_spawn_file_actions_adddup2(&actions, descriptors.childError, 2)
        // Our pipes are close-on-exec; this also closes descriptors others in this
        // process opened without it (sockets, files) so the plugin cannot inherit them.
        _ = CBuzzLinux_posix_spawn_file_actions_addclosefrom(&actions, 3)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.name)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        var status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        // ETXTBSY: the file is open for writing somewhere — often only for an instant, in a
        // child another thread is starting that has not reached exec yet. Try again briefly.
        for delay in [5, 20, 50, 100] where status == ETXTBSY {
            usleep(useconds_t(delay * 1000))
            status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        }
        guard status == 0 else {
            let reason = SystemError("posix_spawn", errno: status).reason
            switch status {
            case ENOENT:
                throw ProgramError(.notFound, program: program, detail: "\(path): \(reason)", underlyingErrno: status)
            case EACCES, ENOEXEC, EPERM, EISDIR:
                throw ProgramError(.notExecutable, program: program, detail: "\(path): \(reason)", underlyingErrno: status)
            default:
                throw ProgramError(.systemCallFailed, program: program, detail: "cannot start \(path): \(reason)", underlyingErrno: status)
            }
        }
        return pid
    }

    private enum Phase: Equatable {
        case running
        case terminating(killAt: UInt64)
        case killed
    }

    /// Feeds standard input, collects the output and watches the clock until
    /// the program has ended, in `PollLoop` on the calling thread.
    private func supervise(pid: pid_t, program: String, standardInput: [UInt8], descriptors: inout Descriptors,
                           cancellation: CancellationFlag?) throws -> ProgramResult {
        let start = monotonicNanoseconds()
        let deadline = start &+ nanoseconds(timeout)
        var phase = Phase.running
        var timedOut = false
        var cancelled = false
        var output = Capture(limit: outputLimit, keeps: .beginning)
        var error = Capture(limit: outputLimit, keeps: .end)
        var written = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        if standardInput.isEmpty { descriptors.release(\.inputWrite) }

        /// The clock and the child: stops its group on timeout or cancellation,
        /// kills it after the grace; the result once it has ended.
        func check() throws -> ProgramResult? {
            let now = monotonicNanoseconds()
            switch phase {
            case .running:
                let cancelNow = cancellation?.isCancelled ?? false
                if now >= deadline || cancelNow {
                    timedOut = !cancelNow
                    cancelled = cancelNow
                    _ = kill(-pid, SIGTERM)
                    phase = .terminating(killAt: now &+ nanoseconds(terminationGrace))
                }
            case .terminating(let killAt):
                if now >= killAt {
                    _ = kill(-pid, SIGKILL)
                    phase = .killed
                }
            case .killed:
                break
            }
            guard try hasExited(pid, program: program) else { return nil }
            // The leader is a zombie until reaped, so its group id cannot be
            // reused yet: whatever it left behind in the group goes now.
            if phase != .running { _ = kill(-pid, SIGKILL) }
            let status = reap(pid)
            drain(descriptors.outputRead, into: &output, buffer: &buffer)
            drain(descriptors.errorRead, into: &error, buffer: &buffer)
            if cancelled { throw CancellationError() }
            return ProgramResult(termination: status,
                                 standardOutput: output.bytes, standardError: error.bytes,
                                 standardOutputTruncated: output.truncated, standardErrorTruncated: error.truncated,
                                 timedOut: timedOut)
        }

        while true {
            if let result = try check() { return result }
            var result: ProgramResult?
            // Sleep until there is something to read or write, but wake often
            // enough to notice the exit (a grandchild may hold the pipes open).
            // A failed poll goes round here, after another look at the child.
            _ = try PollLoop.run(watch: {
                let fds = [
                    pollfd(fd: descriptors.outputRead, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: descriptors.errorRead, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: descriptors.inputWrite, events: Int16(POLLOUT), revents: 0),
                ]
                let pipesOpen = fds.contains { $0.fd >= 0 }
                var waitMilliseconds: Int64 = pipesOpen ? 20 : 5
                let now = monotonicNanoseconds()
                switch phase {
                case .running: waitMilliseconds = min(waitMilliseconds, Int64((deadline &- min(now, deadline)) / 1_000_000) + 1)
                case .terminating(let killAt): waitMilliseconds = min(waitMilliseconds, Int64((killAt &- min(now, killAt)) / 1_000_000) + 1)
                case .killed: break
                }
                return (fds, Int32(waitMilliseconds))
            }) { fds in
                if fds[0].revents != 0 { readChunk(&descriptors, \.outputRead, into: &output, buffer: &buffer) }
                if fds[1].revents != 0 { readChunk(&descriptors, \.errorRead, into: &error, buffer: &buffer) }
                if fds[2].revents != 0 {
                    let count = standardInput.withUnsafeBytes { bytes in
                        write(descriptors.inputWrite, bytes.baseAddress! + written, bytes.count - written)
                    }
                    if count > 0 {
                        written += count
                        if written == standardInput.count { descriptors.release(\.inputWrite) }
                    } else if count < 0 && errno != EAGAIN && errno != EINTR {
                        descriptors.release(\.inputWrite)  // EPIPE: the program stopped reading; not our failure
                    }
                }
                result = try check()
                return result == nil ? .keepWatching : .finish
            }
            if let result { return result }
        }
    }

    /// Whether `pid` has ended, without reaping it (WNOWAIT).
    private func hasExited(_ pid: pid_t, program: String) throws(ProgramError) -> Bool {
        var info = siginfo_t()
        let status = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        if status == 0 { return info._sifields._sigchld.si_pid == pid }
        let code = errno
        if code == EINTR { return false }
        _ = kill(-pid, SIGKILL)
        throw ProgramError(.systemCallFailed, program: program,
                           detail: "lost track of the program (\(SystemError("waitid", errno: code)))", underlyingErrno: code)
    }

    private func reap(_ pid: pid_t) -> ProgramResult.Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    private func readChunk(_ descriptors: inout Descriptors, _ which: WritableKeyPath<Descriptors, Int32>,
                      into capture: inout Capture, buffer: inout [UInt8]) {
        let fd = descriptors[keyPath: which]
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            buffer.withUnsafeBytes { capture.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
            descriptors.release(which)
        }
    }

    /// Reads what is left in a pipe after the program ended, without waiting for
    /// writers it left behind; bounded so a babbling grandchild cannot hold us.
    private func drain(_ fd: Int32, into capture: inout Capture, buffer: inout [UInt8]) {
        guard fd >= 0 else { return }
        var budget = 16 * 1024 * 1024
        while budget > 0 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { capture.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                budget -= count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

// MARK: - Helpers

/// The descriptors of one run; closes each exactly once.
private struct Descriptors {
    var outputRead: Int32 = -1
    var errorRead: Int32 = -1
    var inputWrite: Int32 = -1
    var childOutput: Int32 = -1
    var childError: Int32 = -1
    var childInput: Int32 = -1

    mutating func release(_ which: WritableKeyPath<Descriptors, Int32>) {
        let fd = self[keyPath: which]
        if fd >= 0 { _ = close(fd) }
        self[keyPath: which] = -1
    }

    mutating func closeChildEnds() {
        release(\.childOutput)
        release(\.childError)
        release(\.childInput)
    }

    mutating func closeAll() {
        closeChildEnds()
        release(\.outputRead)
        release(\.errorRead)
        release(\.inputWrite)
    }
}

/// Keeps the beginning or the end of a stream, up to a limit, and counts the rest.
private struct Capture {
    enum Keeps { case beginning, end }

    let limit: Int
    let keeps: Keeps
    private var storage: [UInt8] = []
    private var total = 0

    init(limit: Int, keeps: Keeps) {
        self.limit = limit
        self.keeps = keeps
    }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        total += chunk.count
        switch keeps {
        case .beginning:
            let room = limit - storage.count
            if room > 0 { storage.append(contentsOf: chunk.prefix(room)) }
        case .end:
            storage.append(contentsOf: chunk)
            if storage.count > 2 * limit { storage.removeFirst(storage.count - limit) }
        }
    }

    var bytes: [UInt8] {
        storage.count > limit ? Array(storage.suffix(limit)) : storage
    }

    var truncated: Bool { total > limit }
}

/// Set from a task's cancellation handler, read by the thread that watches the program.
private final class CancellationFlag: Sendable {
    private let state = Mutex(false)

    func cancel() { state.withLock { $0 = true } }
    var isCancelled: Bool { state.withLock { $0 } }
}

private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

private func nanoseconds(_ seconds: Double) -> UInt64 {
    guard seconds > 0 else { return 0 }
    return seconds >= 1e9 ? UInt64(1e18) : UInt64(seconds * 1e9)
}

private func shellQuoted(_ text: String) -> String {
    let safe = text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+,:@%".contains($0)) }
    return safe && !text.isEmpty ? text : "'" + text.replacing("'", with: "'\\''") + "'"
}

/// What `resolve` finds at a path.
private enum FileCheck {
    case executable, notExecutable, directory, missing

    init(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            self = .missing
            return
        }
        if info.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR) {
            self = .directory
        } else {
            self = access(path, X_OK) == 0 ? .executable : .notExecutable
        }
    }
}
