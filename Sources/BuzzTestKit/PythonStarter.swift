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
