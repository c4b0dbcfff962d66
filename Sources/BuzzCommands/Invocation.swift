import BirthdayBuzz
import Foundation
import Synchronization

/// What one run of a `buzz` command sees of the process around it: its
/// environment, working directory, standard input and outputs, and whether
/// those are terminals.
///
/// The executable runs with `Invocation.process` (the real ones). A program that
/// embeds the commands, the test suite among them, runs `Buzz.run(_:)` with
/// another one bound as `Invocation.$current`: the command then reads that
/// environment, resolves relative paths against that directory and writes to
/// those outputs, so many runs can share one process. What stays process-wide
/// is the umask and signal dispositions (`Buzz.main` sets them), and what a C
/// library reads from the environment by itself (libcurl's proxy variables).
public struct Invocation: Sendable {
    public var environment: [String: String]
    /// The working directory relative paths on the command line start from.
    public var directory: String
    /// Lines of standard input; nil reads the process's own.
    public var input: InputLines?
    /// Whether standard input, output and error are terminals (prompts, progress bars).
    public var inputIsTerminal: Bool
    public var outputIsTerminal: Bool
    public var errorIsTerminal: Bool
    private let output: @Sendable (String) -> Void
    private let errorOutput: @Sendable (String) -> Void
    /// Whether `output` is the process's buffered standard output.
    private let ownsTheProcessOutputs: Bool

    /// The process's environment, read from `environ` itself (the first of two
    /// same names wins, as with `getenv`). Foundation's
    /// `ProcessInfo.environment` cost a status bar's `buzz status` ~0.4 ms:
    /// its first uses of generic types are each a scan of every protocol
    /// conformance in the static binary.
    static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        var entry = environ
        while let pair = entry.pointee {
            entry += 1
            guard let equals = strchr(pair, Int32(UInt8(ascii: "="))) else { continue }
            let key = String(decoding: UnsafeRawBufferPointer(start: pair, count: equals - pair), as: UTF8.self)
            if environment[key] == nil { environment[key] = String(cString: equals + 1) }
        }
        return environment
    }

    /// The working directory (`getcwd`), else Foundation's answer.
    static func processDirectory() -> String {
        guard let path = getcwd(nil, 0) else { return FileManager.default.currentDirectoryPath }
        defer { free(path) }
        return String(cString: path)
    }

    /// The process's own environment, directory, stdin, stdout and stderr.
    public static var process: Invocation {
        Invocation(environment: processEnvironment(),
                   directory: processDirectory(), input: nil,
                   inputIsTerminal: isatty(STDIN_FILENO) == 1, outputIsTerminal: isatty(STDOUT_FILENO) == 1,
                   errorIsTerminal: isatty(STDERR_FILENO) == 1,
                   output: { Swift.print($0, terminator: "") },
                   errorOutput: { FileHandle.standardError.write(Data($0.utf8)) }, ownsTheProcessOutputs: true)
    }

    /// A run whose outputs go to `output` and `errorOutput`, no terminal anywhere.
    public init(environment: [String: String], directory: String, input: InputLines? = InputLines(""),
                output: @escaping @Sendable (String) -> Void, errorOutput: @escaping @Sendable (String) -> Void) {
        self.init(environment: environment, directory: directory, input: input, inputIsTerminal: false,
                  outputIsTerminal: false, errorIsTerminal: false, output: output, errorOutput: errorOutput,
                  ownsTheProcessOutputs: false)
    }

    private init(environment: [String: String], directory: String, input: InputLines?, inputIsTerminal: Bool,
                 outputIsTerminal: Bool, errorIsTerminal: Bool,
                 output: @escaping @Sendable (String) -> Void, errorOutput: @escaping @Sendable (String) -> Void,
                 ownsTheProcessOutputs: Bool) {
        self.environment = environment
        self.directory = directory
        self.input = input
        self.inputIsTerminal = inputIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.errorIsTerminal = errorIsTerminal
        self.output = output
        self.errorOutput = errorOutput
        self.ownsTheProcessOutputs = ownsTheProcessOutputs
    }

    /// The invocation the running command belongs to.
    @TaskLocal public static var current: Invocation = .process

    public func write(_ text: String) { output(text) }

    /// Writes to standard output and flushes it (the process's is buffered when
    /// it is not a terminal): for what must not wait for the buffer to fill, as
    /// the console channel's reminders in the daemon.
    public func writeNow(_ text: String) {
        output(text)
        if ownsTheProcessOutputs { fflush(nil) }
    }
    public func writeError(_ text: String) { errorOutput(text) }

    /// One line of standard input without its newline; nil at its end.
    public func readLine() -> String? {
        if let input { return input.next() }
        fflush(nil)
        return Swift.readLine()
    }

    /// `path` made absolute against this run's working directory.
    public func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        return ((directory.hasSuffix("/") ? directory : directory + "/") + path as NSString).standardizingPath
    }

    /// The zone `TZ` names in this run's environment, else the process's.
    public var systemTimeZone: TimeZone {
        if let name = environment["TZ"], !name.isEmpty,
           let zone = TimeZone(identifier: name.hasPrefix(":") ? String(name.dropFirst()) : name) {
            return zone
        }
        return TimeZone.current
    }
}

/// Standard input given as text, read a line at a time.
public final class InputLines: Sendable {
    private let lines: Mutex<ArraySlice<String>>

    public init(_ text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if text.hasSuffix("\n") { lines.removeLast() }
        self.lines = Mutex(ArraySlice(text.isEmpty ? [] : lines))
    }

    func next() -> String? { lines.withLock { $0.popFirst() } }
}

/// `print` for the commands: to the invocation's standard output (the process's
/// unless a caller bound another), formatted as `Swift.print` formats.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    var text = ""
    for (index, item) in items.enumerated() {
        if index > 0 { text += separator }
        text += String(describing: item)
    }
    Invocation.current.write(text + terminator)
}

/// `readLine` for the commands: from the invocation's standard input.
func readLine() -> String? { Invocation.current.readLine() }
