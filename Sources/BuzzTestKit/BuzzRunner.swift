import BuzzCommands
import Foundation
import Synchronization
import Testing

/// Where the `buzz` executable under test is: `BUZZ_BIN`, else next to this
/// test bundle (same scratch path), else `<package>/.build*/debug/buzz`.
public enum BuzzBinary {
    public static let path: String? = locate()

    private static func locate() -> String? {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["BUZZ_BIN"], !override.isEmpty {
            return override
        }
        func usable(_ url: URL) -> String? {
            var isDirectory: ObjCBool = false
            let path = url.standardizedFileURL.path
            guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  fileManager.isExecutableFile(atPath: path) else { return nil }
            return path
        }
        // Next to the test bundle: walk up a few levels (Linux: the .xctest is a
        // file in <scratch>/debug; macOS: a bundle whose executable is deeper).
        var starts: [URL] = [Bundle.main.bundleURL]
        if let first = CommandLine.arguments.first, !first.isEmpty {
            let url = URL(fileURLWithPath: first)
            starts.insert(url.resolvingSymlinksInPath().deletingLastPathComponent(), at: 0)
        }
        for start in starts {
            var directory = start
            for _ in 0..<4 {
                if let found = usable(directory.appendingPathComponent("buzz")) { return found }
                directory = directory.deletingLastPathComponent()
            }
        }
        // The package root, from this file: Tests/BuzzCLITests/BuzzRunner.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        if let found = usable(root.appendingPathComponent(".build/debug/buzz")) { return found }
        let entries = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? []).filter { $0.hasPrefix(".build") }.sorted()
        for entry in entries {
            if let found = usable(root.appendingPathComponent(entry).appendingPathComponent("debug/buzz")) { return found }
        }
        return nil
    }
}

/// What one run of `buzz` did.
public struct BuzzResult: CustomStringConvertible, Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    public var description: String { "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// Lines of stderr, without the empty tail.
    public var stderrLines: [Substring] { stderr.split(separator: "\n") }
}

/// A private world for one test: temp dir, data dir, config home, HOME; the
/// user's own config and session bus are never seen by the child.
public final class Sandbox: Sendable {
    public let root: String
    public let dataDir: String
    public let configHome: String
    public let home: String

    public init() throws {
        let base = TestFolders.temporary.standardizedFileURL.path
        root = base + "/buzz-cli-" + UUID().uuidString.lowercased()
        // The default one ($XDG_DATA_HOME/birthdaybuzz): a command needs no --data-dir, and
        // the same command line is the same in every sandbox (`CommandLines`).
        dataDir = root + "/xdg-data/birthdaybuzz"
        configHome = root + "/config"
        home = root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: configHome, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// `$XDG_CONFIG_HOME/birthdaybuzz/config.toml`, the default config path.
    public var configPath: String { configHome + "/birthdaybuzz/config.toml" }

    public func writeConfig(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: configHome + "/birthdaybuzz", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: configPath))
    }

    /// Writes a file under the sandbox (creating folders) and returns its absolute path.
    @discardableResult
    public func write(_ relativePath: String, _ text: String) throws -> String {
        let path = root + "/" + relativePath
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    public var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home,
            "XDG_CONFIG_HOME": configHome,
            "XDG_DATA_HOME": root + "/xdg-data",
            "XDG_RUNTIME_DIR": root,
            "DBUS_SESSION_BUS_ADDRESS": "",
            "TZ": "UTC",
            "LANG": "C.UTF-8",
        ]
    }

    /// Runs `buzz ARGS` in the sandbox (its data in `dataDir`, the default one),
    /// with `stdin` as its standard input (else an empty one).
    /// `overrides` changes the command's environment (nil removes a variable).
    ///
    /// The command runs in this process (`Buzz.run` with the sandbox's
    /// `Invocation`: its environment, directory, input and outputs), as the
    /// executable would run it but without starting one. `process: true` starts
    /// the `buzz` executable instead, for what only a process shows: the umask
    /// and modes of what it creates, signals, `exit`, a second process's view.
    /// `run`, the daemon, always gets a process (it installs its own executor).
    public func run(_ arguments: [String], stdin: String? = nil,
             environment overrides: [String: String?] = [:], process: Bool = false,
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> BuzzResult {
        let fullArguments = arguments
        var childEnvironment = environment
        for (key, value) in overrides { childEnvironment[key] = value }
        guard process || Buzz.isDaemon(arguments) else {
            let out = Collected(), err = Collected()
            let invocation = Invocation(environment: childEnvironment, directory: root, input: InputLines(stdin ?? ""),
                                        output: out.append, errorOutput: err.append)
            let status = await RunThread.run {
                await Invocation.$current.withValue(invocation) { await CommandLines.run(fullArguments) }
            }
            return BuzzResult(status: status, stdout: out.text, stderr: err.text)
        }
        return try await spawn(fullArguments, stdin: stdin, environment: childEnvironment, sourceLocation: sourceLocation)
    }

    /// The command lines run in this process, parsed once each (`Buzz.parse`): the
    /// suite runs about 1,100, of which 450 are a line run before, and a parse costs
    /// 7 ms of CPU in a debug build.
    private enum CommandLines {
        static let parsed = Mutex<[[String]: ParsedCommandLine]>([:])

        static func run(_ arguments: [String]) async -> Int32 {
            if let known = parsed.withLock({ $0[arguments] }) { return await Buzz.run(known) }
            guard let line = Buzz.parse(arguments) else { return await Buzz.run(arguments) }
            parsed.withLock { $0[arguments] = line }
            return await Buzz.run(line)
        }
    }

    /// What a command wrote to one output.
    private final class Collected: Sendable {
        private let buffer = Mutex("")
        var text: String { buffer.withLock { $0 } }
        func append(_ text: String) { buffer.withLock { $0 += text } }
    }

    private func spawn(_ arguments: [String], stdin: String?, environment childEnvironment: [String: String],
                       sourceLocation: SourceLocation) async throws -> BuzzResult {
        let binary = try #require(BuzzBinary.path, """
            buzz binary not found: build it (swift build --product buzz) or set BUZZ_BIN
            """, sourceLocation: sourceLocation)
        let tag = UUID().uuidString.lowercased()
        let outPath = root + "/.stdout-" + tag, errPath = root + "/.stderr-" + tag
        guard FileManager.default.createFile(atPath: outPath, contents: nil),
              FileManager.default.createFile(atPath: errPath, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        var inHandle = FileHandle.nullDevice
        if let stdin {
            let inPath = try write(".stdin-" + tag, stdin)
            inHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = childEnvironment
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        process.standardInput = inHandle
        process.standardOutput = outHandle
        process.standardError = errHandle
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try outHandle.close()
        try errHandle.close()
        if stdin != nil { try inHandle.close() }
        let stdout = try String(contentsOfFile: outPath, encoding: .utf8)
        let stderr = try String(contentsOfFile: errPath, encoding: .utf8)
        return BuzzResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// Runs a command that must succeed and print a JSON array of objects.
    public func jsonRows(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [JSONRow] {
        let result = try await run(arguments, sourceLocation: sourceLocation)
        #expect(result.status == 0, "\(arguments): \(result)", sourceLocation: sourceLocation)
        return try JSONRow.parseArray(result.stdout, sourceLocation: sourceLocation)
    }

    /// `list --all --json` by contact id: the birthday entries (an anniversary
    /// has an entry of its own, `"occasion": "anniversary"`).
    public func listAll(now: String = "2027-01-15", sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: JSONRow] {
        let rows = try await jsonRows(["list", "--all", "--json", "--now", now], sourceLocation: sourceLocation)
        var byID: [String: JSONRow] = [:]
        for row in rows {
            guard case .string(let id) = row["contact_id"] else {
                Issue.record("row without contact_id: \(row)", sourceLocation: sourceLocation)
                continue
            }
            if row["occasion"] == .string("anniversary") { continue }
            byID[id] = row
        }
        return byID
    }
}

/// One JSON value, typed precisely (JSONSerialization's NSNumber would let
/// `1` pass for `true`).
public enum JSONValue: Equatable, CustomStringConvertible {
    case missing, null, bool(Bool), int(Int), double(Double), string(String), array([JSONValue]), object

    public init(_ any: Any?) {
        switch any {
        case nil: self = .missing
        case is NSNull: self = .null
        case let string as String: self = .string(string)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" {
                self = .bool(number.boolValue)
            } else if number.doubleValue == Double(number.intValue) {
                self = .int(number.intValue)
            } else {
                self = .double(number.doubleValue)
            }
        case let array as [Any]: self = .array(array.map { JSONValue($0) })
        default: self = .object
        }
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var int: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    public var description: String {
        switch self {
        case .missing: return "<missing>"
        case .null: return "null"
        case .bool(let value): return "\(value)"
        case .int(let value): return "\(value)"
        case .double(let value): return "\(value)"
        case .string(let value): return "\"\(value)\""
        case .array(let values): return "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object: return "{…}"
        }
    }
}

/// One JSON object of a command's output.
public struct JSONRow: CustomStringConvertible {
    public var fields: [String: Any]

    public subscript(key: String) -> JSONValue { JSONValue(fields[key]) }

    public var keys: Set<String> { Set(fields.keys) }

    public var description: String {
        "{" + fields.keys.sorted().map { "\($0): \(self[$0])" }.joined(separator: ", ") + "}"
    }

    public static func parseArray(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSONRow] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let array = try #require(object as? [[String: Any]], "not an array of objects: \(text)",
                                 sourceLocation: sourceLocation)
        return array.map { JSONRow(fields: $0) }
    }

    public static func parseObject(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONRow {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return JSONRow(fields: try #require(object as? [String: Any], "not an object: \(text)",
                                            sourceLocation: sourceLocation))
    }
}

/// vCard text for fixtures.
public enum VCard {
    /// One card. `uid: nil` writes no UID line; `lineEnding` lets a test use CRLF.
    public static func card(uid: String?, name: String?, bday: String? = nil, emails: [String] = [],
                     phones: [String] = [], categories: [String] = [], extra: [String] = [],
                     version: String = "3.0", lineEnding: String = "\n") -> String {
        var lines = ["BEGIN:VCARD", "VERSION:\(version)"]
        if let uid { lines.append("UID:\(uid)") }
        if let name {
            lines.append("FN:\(name)")
            let parts = name.split(separator: " ")
            lines.append("N:\(parts.last.map(String.init) ?? "");\(parts.dropLast().joined(separator: " "));;;")
        }
        if let bday { lines.append("BDAY:\(bday)") }
        for email in emails { lines.append("EMAIL;TYPE=INTERNET:\(email)") }
        for phone in phones { lines.append("TEL;TYPE=CELL:\(phone)") }
        if !categories.isEmpty { lines.append("CATEGORIES:" + categories.joined(separator: ",")) }
        lines += extra
        lines.append("END:VCARD")
        return lines.joined(separator: lineEnding) + lineEnding
    }
}

/// The numbers of `imported …: 1 added, 2 updated, 3 unchanged, 4 removed, 5 skipped`.
public struct ImportCounts: Equatable, CustomStringConvertible {
    public var added = 0, updated = 0, unchanged = 0, removed = 0, skipped = 0

    public init(added: Int = 0, updated: Int = 0, unchanged: Int = 0, removed: Int = 0, skipped: Int = 0) {
        self.added = added
        self.updated = updated
        self.unchanged = unchanged
        self.removed = removed
        self.skipped = skipped
    }

    /// Parses the counts line of `buzz import`; nil when there is none or a count is missing.
    public init?(output: String) {
        guard let line = output.split(separator: "\n").last(where: { $0.contains(" added") }) else { return nil }
        var found: [String: Int] = [:]
        let words = line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ":" })
        for (index, word) in words.enumerated() where index > 0 {
            if let number = Int(words[index - 1]) { found[String(word)] = number }
        }
        guard let added = found["added"], let updated = found["updated"], let unchanged = found["unchanged"],
              let removed = found["removed"], let skipped = found["skipped"] else { return nil }
        self.init(added: added, updated: updated, unchanged: unchanged, removed: removed, skipped: skipped)
    }

    public var description: String {
        "\(added) added, \(updated) updated, \(unchanged) unchanged, \(removed) removed, \(skipped) skipped"
    }
}
