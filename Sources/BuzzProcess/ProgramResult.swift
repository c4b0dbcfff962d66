#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

// What a program we started did: how it ended and what it said
// (ProgramResult), or why it could not run (ProgramError). ProgramRunner.swift
// is how programs are started (the policy and the spawning).

/// How a program ended and what it said.
public struct ProgramResult: Sendable, Hashable {
    /// How the program's process ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): return "exited with status \(status)"
            case .signaled(let signal): return "was killed by signal \(signal)\(signalName(signal).map { " (\($0))" } ?? "")"
            }
        }
    }

    public var termination: Termination
    /// The first `outputLimit` bytes of standard output.
    public var standardOutput: [UInt8]
    /// The last `outputLimit` bytes of standard error (the end of an error report is what explains it).
    public var standardError: [UInt8]
    /// Whether standard output held more than was kept.
    public var standardOutputTruncated: Bool
    /// Whether standard error held more than was kept.
    public var standardErrorTruncated: Bool
    /// Whether the program ran past its timeout and was stopped.
    public var timedOut: Bool

    public init(termination: Termination, standardOutput: [UInt8], standardError: [UInt8],
                standardOutputTruncated: Bool = false, standardErrorTruncated: Bool = false, timedOut: Bool = false) {
        self.termination = termination
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardOutputTruncated = standardOutputTruncated
        self.standardErrorTruncated = standardErrorTruncated
        self.timedOut = timedOut
    }

    /// Exited with status 0 within its time.
    public var succeeded: Bool { termination == .exited(0) && !timedOut }

    /// The last line of standard error that is not blank, with control characters
    /// made spaces; nil when there is none. Scrub it before showing it.
    public var lastErrorLine: String? {
        Self.lastLine(of: String(decoding: standardError, as: UTF8.self))
    }

    /// The last line of `text` that is not blank, control characters made spaces, trimmed.
    public static func lastLine(of text: String) -> String? {
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.allSatisfy(\.isWhitespace) }) else {
            return nil
        }
        let printable = line.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) }
        return String(printable).trimmingCharacters(in: .whitespaces)
    }
}

/// A program could not be run: not found, not executable, in an untrusted
/// folder, or a system call failed. `description` is one sentence naming the program.
public struct ProgramError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; more codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let raw: String
        private init(_ raw: String) { self.raw = raw }

        /// The command is empty or holds a NUL byte.
        public static let invalidCommand = Code("invalid command")
        /// No such file, or no such name in `PATH`.
        public static let notFound = Code("not found")
        /// It exists but cannot be executed.
        public static let notExecutable = Code("not executable")
        /// A folder is writable by others or owned by someone else (`checkTrusted(directory:)`).
        public static let untrustedDirectory = Code("untrusted directory")
        /// Starting or watching the program failed for a system reason (out of processes, memory, descriptors).
        public static let systemCallFailed = Code("system call failed")

        public var description: String { raw }
    }

    public var code: Code
    /// The program (as the config names it), or the folder for `.untrustedDirectory`.
    public var program: String
    /// What is wrong, in plain words.
    public var detail: String
    /// The `errno` behind it, when there is one.
    public var underlyingErrno: Int32?

    public init(_ code: Code, program: String, detail: String, underlyingErrno: Int32? = nil) {
        self.code = code
        self.program = program
        self.detail = detail
        self.underlyingErrno = underlyingErrno
    }

    public var description: String {
        switch code {
        case .untrustedDirectory: return detail
        case .invalidCommand: return "cannot run \(program.isEmpty ? "the command" : "program \"\(program)\""): \(detail)"
        default: return "cannot run program \"\(program)\": \(detail)"
        }
    }
}

/// The usual name of a signal, for messages.
private func signalName(_ signal: Int32) -> String? {
    switch signal {
    case SIGHUP: return "SIGHUP"
    case SIGINT: return "SIGINT"
    case SIGQUIT: return "SIGQUIT"
    case SIGILL: return "SIGILL"
    case SIGABRT: return "SIGABRT"
    case SIGBUS: return "SIGBUS"
    case SIGFPE: return "SIGFPE"
    case SIGKILL: return "SIGKILL"
    case SIGSEGV: return "SIGSEGV"
    case SIGPIPE: return "SIGPIPE"
    case SIGALRM: return "SIGALRM"
    case SIGTERM: return "SIGTERM"
    default: return nil
    }
}

/// `text` as one shell word, for the fix a message suggests.
