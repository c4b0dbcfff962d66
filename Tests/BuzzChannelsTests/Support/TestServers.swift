import BuzzTestKit
import CurlSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// Real servers for the channel adapter tests (docs/design/testing.md): the Python sinks in
// `Servers/` (copied into the test bundle), started on 127.0.0.1 with a port
// the kernel picks, stopped by `stop()` or when their owner is deinitialized.
//
// Sendability: every class here is `Sendable` and keeps its mutable state in a
// `Mutex` (Synchronization); `Process` and `FileHandle` are only touched under
// that lock, so no `@unchecked` is needed.

/// Why a test server could not start or answer.
struct TestServerError: Error, CustomStringConvertible {
    var description: String
}

// MARK: - Process

/// One running Python sink (BuzzTestKit's `PythonServer`). Killed by `stop()` or
/// on deinit; it also exits by itself when the test process dies (forked by a
/// `PythonStarter`, it dies with the starter, which ends at the end of its stdin;
/// started on its own, it has `--exit-on-eof` and we hold its stdin).
typealias ServerProcess = PythonServer

/// What the sinks import (http.server, asyncio, ssl, aiosmtpd: about 0.1-0.2 s
/// of CPU for each sink started from scratch), loaded once by their starter.
private let sinkModules = PythonStarter.Preload(
    paths: [ServerGate.serversDirectory.path],
    modules: ["argparse", "asyncio", "base64", "http.server", "logging", "ssl", "threading", "time", "warnings",
              "aiosmtpd.smtp", "sink_common"])

/// Starts `<Servers/script> arguments…` through a `PythonStarter` (else as
/// `ServerGate.python <script> arguments… --exit-on-eof`), waits (up to
/// `timeout`) for `READY <port>` on its stdout and returns the running server.
/// Throws "<script> did not start: <stderr>" when the process exits, prints
/// something else, or stays silent too long.
///
/// stdout and stderr go to files in a fresh temp folder (no pipe can fill up
/// and block the server); the folder goes away with `stop()`.
func startProcess(
    _ script: String,
    arguments: [String] = [],
    timeout: Duration = .seconds(10)
) async throws -> ServerProcess {
    let fileManager = FileManager.default
    let scriptURL = ServerGate.serversDirectory.appendingPathComponent(script)
    guard fileManager.fileExists(atPath: scriptURL.path) else {
        throw TestServerError(description: "\(script) did not start: no such file \(scriptURL.path)")
    }
    let directory = TestFolders.temporary
        .appendingPathComponent("buzz-server-" + UUID().uuidString.lowercased())
    try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
    return try await PythonServer.launch(python: ServerGate.python, script: scriptURL.path, arguments: arguments,
                                         preload: sinkModules, directory: directory, timeout: timeout)
}

// MARK: - Running a helper program

/// What a finished helper process printed.
struct ProcessOutput: Sendable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// Runs `executable arguments…` to completion (e.g. a small `smtplib` client via
/// `ServerGate.python -c CODE`), with stdin closed, and returns its output.
/// Killed after `timeout`.
func runProgram(
    _ executable: String,
    _ arguments: [String],
    timeout: Duration = .seconds(30)
) async throws -> ProcessOutput {
    let fileManager = FileManager.default
    let directory = TestFolders.temporary
        .appendingPathComponent("buzz-run-" + UUID().uuidString.lowercased())
    try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? fileManager.removeItem(at: directory) }
    let stdoutURL = directory.appendingPathComponent("stdout")
    let stderrURL = directory.appendingPathComponent("stderr")
    try Data().write(to: stdoutURL)
    try Data().write(to: stderrURL)
    let stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
    let stderrHandle = try FileHandle(forWritingTo: stderrURL)
    defer {
        try? stdoutHandle.close()
        try? stderrHandle.close()
    }

    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdoutHandle
    process.standardError = stderrHandle
    try process.run()

    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while process.isRunning {
        if clock.now >= deadline {
            if process.isRunning { terminate(pid: process.processIdentifier) }
            throw TestServerError(description: "\(executable) did not finish within \(timeout)")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    return ProcessOutput(
        status: process.terminationStatus,
        stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
    )
}

/// Runs `ServerGate.python -c code arguments…` (arguments are `sys.argv[1:]`).
///
/// Forked from a `PythonStarter` that has the modules these snippets use loaded
/// (dbus, smtplib, email: 0.05-0.1 s of CPU each time a fresh python imports them),
/// else a python of its own.
func runPython(_ code: String, _ arguments: [String] = [], timeout: Duration = .seconds(30)) async throws -> ProcessOutput {
    let directory = TestFolders.temporary.appendingPathComponent("buzz-snippet-" + UUID().uuidString.lowercased())
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let script = directory.appendingPathComponent("snippet.py")
    try Data(code.utf8).write(to: script)
    return try await runPythonScript(script.path, arguments, preload: snippetModules, timeout: timeout)
}

/// Runs `ServerGate.python script arguments…` with `environment` added, forked
/// from a `PythonStarter` that has `preload` loaded (else a python of its own),
/// and returns its output once it ends; killed after `timeout`.
func runPythonScript(_ script: String, _ arguments: [String], environment: [String: String] = [:],
                     preload: PythonStarter.Preload, timeout: Duration = .seconds(30)) async throws -> ProcessOutput {
    let fileManager = FileManager.default
    let directory = TestFolders.temporary.appendingPathComponent("buzz-python-" + UUID().uuidString.lowercased())
    try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? fileManager.removeItem(at: directory) }
    guard let starter = PythonStarter.shared(python: ServerGate.python, preload: preload),
          let pid = try await starter.start(script, arguments: arguments, environment: environment, directory: directory,
                                            timeout: timeout) else {
        let assignments = environment.map { "\($0.key)=\($0.value)" }
        return try await runProgram("/usr/bin/env", assignments + [ServerGate.python, script] + arguments, timeout: timeout)
    }
    let statusURL = directory.appendingPathComponent("status")
    let deadline = ContinuousClock.now + timeout
    while true {
        let text = (try? String(contentsOf: statusURL, encoding: .utf8)) ?? ""
        if text.hasSuffix("\n"), let status = Int32(text.dropLast()) {
            return ProcessOutput(status: status,
                                 stdout: (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? "",
                                 stderr: (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "")
        }
        if hasEnded(pid: pid) && !fileManager.fileExists(atPath: statusURL.path) {
            throw TestServerError(description: "\(script) ended without an exit status: "
                                  + ((try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""))
        }
        if ContinuousClock.now >= deadline {
            terminate(pid: pid)
            throw TestServerError(description: "\(script) did not finish within \(timeout)")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// What the `runPython` snippets import.
private let snippetModules = PythonStarter.Preload(
    modules: ["json", "smtplib", "ssl", "email", "email.header", "email.policy", "email.parser", "dbus", "dbus.lowlevel", "dbus.bus"])

// MARK: - HTTP sink

/// Header fields of a recorded request, in order; lookup ignores case.
struct RecordedHeaders: Sendable, Equatable {
    var fields: [Field]

    struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// The first value of `name` (case-insensitive), or nil.
    subscript(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// All values of `name` (case-insensitive), in order.
    func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    func contains(_ name: String) -> Bool { self[name] != nil }
}

/// One request the HTTP sink received (control requests excluded).
struct RecordedRequest: Sendable, Equatable {
    /// Arrival order, from 0.
    var seq: Int
    var method: String
    /// Path with query, as sent: "/hook?x=1".
    var path: String
    var headers: RecordedHeaders
    var body: Data
    /// The client's remote port: equal values mean one reused connection.
    var connection: Int
    /// The status the sink answered, nil when the script dropped the connection.
    var status: Int?

    /// The body as UTF-8, nil if it is not valid UTF-8.
    var bodyText: String? { String(data: body, encoding: .utf8) }

    /// The body parsed as JSON (`JSONSerialization`), nil if it is not JSON.
    func bodyJSON() -> Any? { try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }
}

/// The stdlib HTTP sink (`Servers/http_sink.py`): records every request and
/// answers from a script the test sets.
///
/// ```swift
/// let sink = HTTPSink()
/// let base = try await sink.start()                 // http://127.0.0.1:PORT
/// try await sink.script([["status": 500], ["status": 429, "headers": ["Retry-After": "7"]]],
///                       default: ["status": 200])
/// … send to base.appendingPathComponent("hook") …
/// let requests = try await sink.requests()
/// ```
///
/// A response object: `status` (200), `headers` ([String: String]), `body`
/// (text) or `body_base64`, `hang` (seconds to sleep before answering),
/// `close` (close the connection after answering), `drop` (close without
/// answering).
final class HTTPSink: Sendable {
    /// Status answered when the script is empty (`--status`).
    let defaultStatus: Int
    private let server = Mutex<ServerProcess?>(nil)

    init(defaultStatus: Int = 200) {
        self.defaultStatus = defaultStatus
        _ = Self.roomForEveryTestsConnections
    }

    /// The tests of this process run side by side, each with its own clients: a
    /// cap of 16 kept-alive connections for the whole process would close one
    /// test's connection in the middle of its batch (`CurlSession.maxOpenHandles`).
    private static let roomForEveryTestsConnections: Void = { CurlSession.maxOpenHandles = 256 }()

    deinit {
        stop()
    }

    /// Starts the sink; returns its base URL `http://127.0.0.1:PORT`.
    @discardableResult
    func start() async throws -> URL {
        try await start(extra: [])
    }

    /// Starts the sink with a second, HTTPS listener (a self-signed certificate
    /// for 127.0.0.1 in `directory`); returns its base URL `https://127.0.0.1:PORT`
    /// and the certificate's path. Script and record are shared with `url`.
    func startTLS(in directory: URL) async throws -> (url: URL, certificate: String) {
        let (certificate, key) = try await SMTPSink.makeCertificate(in: directory)
        try await start(extra: ["--tls", certificate, key])
        let reply = try await controlRequest(method: "GET", path: "/__tls", body: nil)
        guard let port = (try JSONSerialization.jsonObject(with: reply) as? [String: Any])?["port"] as? Int else {
            throw TestServerError(description: "http_sink.py: no TLS port")
        }
        return (URL(string: "https://127.0.0.1:\(port)")!, certificate)
    }

    @discardableResult
    private func start(extra: [String]) async throws -> URL {
        precondition(server.withLock { $0 == nil }, "HTTPSink started twice")
        let process = try await startProcess("http_sink.py", arguments: ["--status", String(defaultStatus)] + extra)
        server.withLock { $0 = process }
        return url
    }

    /// The running server's port (traps when not started).
    var port: Int {
        guard let port = server.withLock({ $0?.port }) else { preconditionFailure("HTTPSink not started") }
        return port
    }

    /// `http://127.0.0.1:PORT` (traps when not started).
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// `url` + `path` ("/hook?x=1").
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    var isRunning: Bool { server.withLock { $0?.isRunning ?? false } }

    /// Replaces the script: each following request takes the next of
    /// `responses`, then `default` (nil keeps the current default).
    func script(_ responses: [[String: Any]], default defaultResponse: [String: Any]? = nil) async throws {
        var control: [String: Any] = ["responses": responses]
        if let defaultResponse { control["default"] = defaultResponse }
        let body = try JSONSerialization.data(withJSONObject: control)
        _ = try await controlRequest(method: "POST", path: "/__control", body: body)
    }

    /// Every recorded request so far, in arrival order.
    func requests() async throws -> [RecordedRequest] {
        let data = try await controlRequest(method: "GET", path: "/__requests", body: nil)
        return try Self.decodeRequests(data)
    }

    /// Answers the requests held by a `"hold": true` response, and any to come.
    func release() async throws {
        _ = try await controlRequest(method: "POST", path: "/__release", body: nil)
    }

    /// Forgets the recorded requests.
    func clearRequests() async throws {
        _ = try await controlRequest(method: "DELETE", path: "/__requests", body: nil)
    }

    /// Kills the server. Idempotent; also done on deinit.
    func stop() {
        let process = server.withLock { state -> ServerProcess? in
            defer { state = nil }
            return state
        }
        process?.stop()
    }

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    private func controlRequest(method: String, path: String, body: Data?) async throws -> Data {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.cachePolicy = .reloadIgnoringLocalCacheData
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Self.session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? -1
            throw TestServerError(description: "http_sink.py: \(method) \(path) answered \(status): "
                + (String(data: data, encoding: .utf8) ?? ""))
        }
        return data
    }

    static func decodeRequests(_ data: Data) throws -> [RecordedRequest] {
        guard let array = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw TestServerError(description: "http_sink.py: /__requests is not a JSON array")
        }
        return try array.map { entry in
            guard let method = entry["method"] as? String, let path = entry["path"] as? String,
                  let base64 = entry["body_base64"] as? String, let body = Data(base64Encoded: base64),
                  let connection = entry["connection"] as? Int, let seq = entry["seq"] as? Int
            else {
                throw TestServerError(description: "http_sink.py: bad request record \(entry)")
            }
            let pairs = entry["headers"] as? [[String]] ?? []
            let fields = pairs.compactMap { pair in
                pair.count == 2 ? RecordedHeaders.Field(name: pair[0], value: pair[1]) : nil
            }
            return RecordedRequest(seq: seq, method: method, path: path, headers: RecordedHeaders(fields: fields),
                                   body: body, connection: connection, status: entry["status"] as? Int)
        }
    }
}

// MARK: - SMTP sink

/// One message the SMTP sink accepted.
struct ReceivedMail: Sendable, Equatable {
    /// The code `--fail` answered at the end of DATA; nil when the message was accepted.
    var refused: Int? = nil
    var mailFrom: String
    var rcptTos: [String]
    /// The raw DATA content after un-dot-stuffing, CRLF line endings kept
    /// (decoded as UTF-8, or Latin-1 when not UTF-8).
    var data: String
    /// Whether the message came over STARTTLS.
    var tls: Bool
    /// The authenticated user, nil without AUTH.
    var auth: String?
    /// The client's remote port.
    var peer: Int?
    /// The name the client gave in EHLO (or HELO).
    var ehlo: String?

    /// The header block, unfolded, as (name, value) pairs.
    var headerFields: [(name: String, value: String)] {
        let normalized = data.replacingOccurrences(of: "\r\n", with: "\n")
        let head = normalized.components(separatedBy: "\n\n").first ?? ""
        var fields: [(name: String, value: String)] = []
        for line in head.split(separator: "\n", omittingEmptySubsequences: false) {
            if let first = line.first, first == " " || first == "\t", !fields.isEmpty {
                fields[fields.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
            } else if let colon = line.firstIndex(of: ":") {
                fields.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        return fields
    }

    /// The first header `name` (case-insensitive), unfolded and trimmed; not
    /// RFC 2047-decoded.
    func header(_ name: String) -> String? {
        headerFields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Everything after the first empty line, CRLFs kept.
    var body: String {
        if let range = data.range(of: "\r\n\r\n") { return String(data[range.upperBound...]) }
        if let range = data.range(of: "\n\n") { return String(data[range.upperBound...]) }
        return ""
    }
}

/// The aiosmtpd sink (`Servers/smtp_sink.py`), plain, with STARTTLS on a
/// self-signed certificate, and/or with AUTH.
///
/// ```swift
/// let sink = SMTPSink()
/// let port = try await sink.start(tls: true, auth: ("buzz", "secret"))
/// … send with CA file sink.certificatePath! …
/// let mail = try sink.messages()
/// ```
final class SMTPSink: Sendable {
    private struct State {
        var server: ServerProcess?
        var directory: URL?
        var certificatePath: String?
        var logPath: String?
    }

    private let state = Mutex(State())

    init() {}

    deinit {
        stop()
    }

    /// Starts the sink on 127.0.0.1 and returns its port.
    /// - tls: advertise and require STARTTLS (530 before it) with a fresh
    ///   self-signed certificate for 127.0.0.1/localhost (`certificatePath`).
    /// - auth: require AUTH PLAIN/LOGIN with this user and password (allowed
    ///   without TLS when `tls` is false).
    /// - rejectRecipient: RCPT TO this address gets 550.
    /// - failData: answer this code (e.g. 451, 554) at the end of DATA; the
    ///   message is not logged. `failTimes`: only the first N messages fail.
    @discardableResult
    func start(
        tls: Bool = false,
        auth: (String, String)? = nil,
        rejectRecipient: String? = nil,
        deferRecipient: String? = nil,
        failData: Int? = nil,
        failTimes: Int? = nil
    ) async throws -> Int {
        precondition(state.withLock { $0.server == nil }, "SMTPSink started twice")
        let fileManager = FileManager.default
        let directory = TestFolders.temporary
            .appendingPathComponent("buzz-smtp-" + UUID().uuidString.lowercased())
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        let logPath = directory.appendingPathComponent("messages.jsonl").path
        var arguments = ["--log", logPath]
        var certificatePath: String?
        do {
            if tls {
                let (certificate, key) = try await Self.makeCertificate(in: directory)
                arguments += ["--starttls", certificate, key]
                certificatePath = certificate
            }
            if let (user, password) = auth { arguments += ["--auth", "\(user):\(password)"] }
            if let rejectRecipient { arguments += ["--reject-rcpt", rejectRecipient] }
            if let deferRecipient { arguments += ["--defer-rcpt", deferRecipient] }
            if let failData { arguments += ["--fail", String(failData)] }
            if let failTimes { arguments += ["--fail-times", String(failTimes)] }
            let server = try await startProcess("smtp_sink.py", arguments: arguments)
            state.withLock {
                $0 = State(server: server, directory: directory, certificatePath: certificatePath, logPath: logPath)
            }
            return server.port
        } catch {
            try? fileManager.removeItem(at: directory)
            throw error
        }
    }

    /// The running server's port (traps when not started).
    var port: Int {
        guard let port = state.withLock({ $0.server?.port }) else { preconditionFailure("SMTPSink not started") }
        return port
    }

    /// `smtp://127.0.0.1:PORT` (traps when not started).
    var url: URL { URL(string: "smtp://127.0.0.1:\(port)")! }

    /// PEM file of the self-signed certificate (it is its own CA), nil
    /// without TLS.
    var certificatePath: String? { state.withLock { $0.certificatePath } }

    var isRunning: Bool { state.withLock { $0.server?.isRunning ?? false } }

    /// Messages accepted so far, in order.
    func messages() throws -> [ReceivedMail] {
        try attempts().filter { $0.refused == nil }
    }

    /// Every message that reached the end of DATA, in order: the accepted ones
    /// and those `--fail` refused (`refused` holds the code they got).
    func attempts() throws -> [ReceivedMail] {
        guard let logPath = state.withLock({ $0.logPath }) else { return [] }
        let text = try String(contentsOfFile: logPath, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            guard let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let data = entry["data"] as? String else {
                throw TestServerError(description: "smtp_sink.py: bad log line \(line)")
            }
            return ReceivedMail(refused: entry["refused"] as? Int,
                                mailFrom: entry["mail_from"] as? String ?? "",
                                rcptTos: entry["rcpt_tos"] as? [String] ?? [],
                                data: data,
                                tls: entry["tls"] as? Bool ?? false,
                                auth: entry["auth"] as? String,
                                peer: entry["peer"] as? Int,
                                ehlo: entry["ehlo"] as? String)
        }
    }

    /// Polls `messages()` until there are at least `count`, or `timeout`.
    func waitForMessages(count: Int, timeout: Duration = .seconds(5)) async throws -> [ReceivedMail] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let mail = try messages()
            if mail.count >= count || clock.now >= deadline { return mail }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Kills the server and removes its files (log, certificate). Idempotent;
    /// also done on deinit.
    func stop() {
        let old = state.withLock { state -> State in
            defer { state = State() }
            return state
        }
        old.server?.stop()
        if let directory = old.directory {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// `openssl req -x509` for CN=127.0.0.1 with SANs IP:127.0.0.1 and
    /// DNS:localhost, valid one day; returns (certificate, key) paths. A P-256
    /// key: an RSA one takes 0.1-0.3 s of CPU to make, this one a millisecond.
    static func makeCertificate(in directory: URL) async throws -> (certificate: String, key: String) {
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let output = try await runProgram("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-days", "1",
            "-keyout", key, "-out", certificate,
        ])
        guard output.status == 0, FileManager.default.fileExists(atPath: certificate) else {
            throw TestServerError(description: "openssl could not make a certificate: \(output)")
        }
        return (certificate, key)
    }
}
