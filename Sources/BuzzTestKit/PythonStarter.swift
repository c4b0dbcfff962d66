import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// `python_starter.py`: one per test process, interpreter and set of modules,
/// started on first use. It imports what its servers need once and forks each
/// server from there, which takes a few milliseconds of CPU instead of the
/// 0.1-0.2 s a fresh `python3 server.py` spends importing (a whole suite starts
/// about 150 HTTP and SMTP sinks and 40 CardDAV servers).
public final class PythonStarter: Sendable {
    private let process: Process
    private let stdin: Mutex<FileHandle>

    private init(process: Process, stdin: FileHandle) {
        self.process = process
        self.stdin = Mutex(stdin)
    }

    /// The modules a starter imports before it forks.
    public struct Preload: Hashable, Sendable {
        /// Folders put first on `sys.path` (where the servers' own modules are).
        public var paths: [String]
        public var modules: [String]
        /// Packages imported with every module under them (lazily loaded plugins).
        public var packages: [String]

        public init(paths: [String] = [], modules: [String], packages: [String] = []) {
            self.paths = paths
            self.modules = modules
            self.packages = packages
        }
    }

    /// The running starter for `python` with `preload`; nil when it cannot run
    /// (then servers start on their own).
    public static func shared(python: String, preload: Preload) -> PythonStarter? {
        let key = Key(python: python, preload: preload)
        return instances.withLock { instances in
            if let running = instances[key], running.process.isRunning { return running }
            let started = start(key)
            instances[key] = started
            return started
        }
    }

    private struct Key: Hashable {
        var python: String
        var preload: Preload
    }

    private static let instances = Mutex<[Key: PythonStarter]>([:])

    private static func start(_ key: Key) -> PythonStarter? {
        guard let script = Bundle.module.url(forResource: "python_starter", withExtension: "py") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: key.python)
        process.arguments = [script.path] + key.preload.paths.flatMap { ["--path", $0] }
            + key.preload.modules.flatMap { ["--preload", $0] }
            + key.preload.packages.flatMap { ["--preload-package", $0] }
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        // Its own complaints (a bad request line) go where the test run's go.
        process.standardError = FileHandle.standardError
        process.environment = pythonEnvironment
        do {
            try process.run()
        } catch {
            return nil
        }
        return PythonStarter(process: process, stdin: stdin.fileHandleForWriting)
    }

    /// The test process's environment, with Python's output unbuffered (a READY
    /// line is read from a file) and no bytecode written beside the scripts.
    public static var pythonEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        return environment
    }

    /// Forks `script arguments…` with its outputs appended to `directory`'s
    /// `stdout` and `stderr` and returns its pid, which the child writes to
    /// `directory/pid` before it runs the script. nil when the starter is gone
    /// or the child did not say its pid within `timeout`.
    public func start(_ script: String, arguments: [String], environment: [String: String] = [:], directory: URL,
                      timeout: Duration) async throws -> pid_t? {
        try await start(["script": script], arguments: arguments, environment: environment, directory: directory,
                        output: directory.appendingPathComponent("stdout"), errors: directory.appendingPathComponent("stderr"),
                        timeout: timeout)
    }

    /// The same for `python -m module arguments…`, with `environment` added to
    /// the starter's, stdout and stderr appended to `output` and `errors`.
    public func start(module: String, arguments: [String], environment: [String: String], directory: URL,
                      output: URL, errors: URL, timeout: Duration) async throws -> pid_t? {
        try await start(["module": module], arguments: arguments, environment: environment, directory: directory,
                        output: output, errors: errors, timeout: timeout)
    }

    private func start(_ what: [String: String], arguments: [String], environment: [String: String], directory: URL,
                       output: URL, errors: URL, timeout: Duration) async throws -> pid_t? {
        var request: [String: Any] = [
            "args": arguments, "directory": directory.path, "environment": environment,
            "stdout": output.path, "stderr": errors.path,
        ]
        request.merge(what) { _, new in new }
        let pidURL = directory.appendingPathComponent("pid")
        try? FileManager.default.removeItem(at: pidURL)
        let data = try JSONSerialization.data(withJSONObject: request)
        let sent = stdin.withLock { handle in
            (try? handle.write(contentsOf: data + Data("\n".utf8))) != nil
        }
        guard sent else { return nil }
        let deadline = ContinuousClock.now + timeout
        while true {
            let text = (try? String(contentsOf: pidURL, encoding: .utf8)) ?? ""
            if text.hasSuffix("\n"), let pid = pid_t(text.dropLast()) { return pid }
            if ContinuousClock.now >= deadline || !process.isRunning { return nil }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// A test server process: our own `Process` (whose stdin we hold: `--exit-on-eof`
/// servers end at its end) or a child of a `PythonStarter` (a pid).
public enum ServerHandle: Sendable {
    case process(Process, stdin: FileHandle)
    case forked(pid_t)

    public var processIdentifier: Int32 {
        switch self {
        case .process(let process, _): process.processIdentifier
        case .forked(let pid): pid
        }
    }

    public var isRunning: Bool {
        switch self {
        case .process(let process, _): !hasEnded(process)
        case .forked(let pid): !hasEnded(pid: pid)
        }
    }

    /// Closes its stdin, then SIGTERM and, after `grace`, SIGKILL; returns once it
    /// has ended as the kernel sees it (`hasEnded`), not when Foundation notices.
    public func stop(grace: Duration = .seconds(2)) {
        if case .process(_, let stdin) = self { try? stdin.close() }
        guard isRunning else { return }
        terminate(pid: processIdentifier, grace: grace)
    }
}

/// Ends process `pid` (SIGTERM, then SIGKILL after `grace`) and waits for its end
/// as the kernel sees it (`hasEnded(pid:)`): a child of a starter, which the
/// kernel reaps, or our own, which ends a zombie.
public func terminate(pid: pid_t, grace: Duration = .seconds(2)) {
    guard !hasEnded(pid: pid) else { return }
    kill(pid, SIGTERM)
    if waitForEnd(pid: pid, limit: grace) { return }
    kill(pid, SIGKILL)
    waitForEnd(pid: pid, limit: .seconds(2))
}

/// Why a Python test server did not start: "<script> did not start: <reason>",
/// then what it wrote to stderr.
public struct PythonServerError: Error, CustomStringConvertible {
    public var description: String
}

/// A Python test server on 127.0.0.1 that printed `READY <port>`: forked from a
/// `PythonStarter`, or a process of its own with `--exit-on-eof` (it exits when
/// the write end of its stdin, which we hold, closes). Its stdout and stderr are
/// files in `directory`; `stop()` (or deinit) ends it and removes the folder.
public final class PythonServer: Sendable {
    /// The script's file name, e.g. "http_sink.py", for messages.
    public let name: String
    /// The port it printed in `READY <port>`.
    public let port: Int
    public let directory: URL
    private let running: Mutex<ServerHandle?>

    private init(name: String, port: Int, directory: URL, handle: ServerHandle) {
        self.name = name
        self.port = port
        self.directory = directory
        running = Mutex(handle)
    }

    deinit { stop() }

    public var processIdentifier: Int32? { running.withLock { $0?.processIdentifier } }

    public var isRunning: Bool { running.withLock { $0?.isRunning ?? false } }

    /// What the server wrote to stderr so far.
    public var standardError: String {
        (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    }

    /// SIGTERM, up to 2 s, then SIGKILL; removes the folder. Idempotent.
    public func stop() {
        let handle = running.withLock { handle -> ServerHandle? in
            defer { handle = nil }
            return handle
        }
        handle?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts `python script arguments…` with its outputs in `directory` (which
    /// exists), through the starter for `python` and `preload` when it runs, and
    /// waits up to `timeout` for its `READY <port>` line. Throws when the server
    /// exits first, prints something else or stays silent; the folder is then removed.
    public static func launch(python: String, script: String, arguments: [String], preload: PythonStarter.Preload,
                              directory: URL, timeout: Duration) async throws -> PythonServer {
        let name = (script as NSString).lastPathComponent
        let stdoutURL = directory.appendingPathComponent("stdout")
        let stderrURL = directory.appendingPathComponent("stderr")
        func failure(_ reason: String) -> PythonServerError {
            let stderr = ((try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            return PythonServerError(description: "\(name) did not start: \(stderr.isEmpty ? reason : "\(reason)\n\(stderr)")")
        }
        let handle: ServerHandle
        do {
            try Data().write(to: stdoutURL)
            try Data().write(to: stderrURL)
            if let starter = PythonStarter.shared(python: python, preload: preload),
               let pid = try await starter.start(script, arguments: arguments, directory: directory, timeout: timeout) {
                handle = .forked(pid)
            } else {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: python)
                process.arguments = [script] + arguments + ["--exit-on-eof"]
                process.currentDirectoryURL = directory
                let stdin = Pipe()
                let output = try FileHandle(forWritingTo: stdoutURL)
                let errors = try FileHandle(forWritingTo: stderrURL)
                defer {
                    // The child has its own copies once it runs.
                    try? output.close()
                    try? errors.close()
                }
                process.standardInput = stdin
                process.standardOutput = output
                process.standardError = errors
                process.environment = PythonStarter.pythonEnvironment
                try process.run()
                handle = .process(process, stdin: stdin.fileHandleForWriting)
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw failure("\(error)")
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            var reason: String?
            let output = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
            if let line = output.split(separator: "\n").first, output.contains("\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == "READY", let port = Int(parts[1]), port > 0 {
                    return PythonServer(name: name, port: port, directory: directory, handle: handle)
                }
                reason = "unexpected output \(String(line).debugDescription)"
            } else if !handle.isRunning {
                reason = "exited before READY"
            } else if ContinuousClock.now >= deadline {
                reason = "no READY line within \(timeout)"
            }
            if let reason {
                let error = failure(reason)
                handle.stop()
                try? FileManager.default.removeItem(at: directory)
                throw error
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
