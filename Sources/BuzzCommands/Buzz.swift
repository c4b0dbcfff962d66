import ArgumentParser
import BirthdayBuzz
import BuzzDaemon
import Foundation

/// `buzz`: the command-line tool and daemon. This target only parses and wires;
/// the executable's `main.swift` calls `Buzz.main()`.
public struct Buzz: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "buzz",
        abstract: "Never miss a birthday: import contacts, plan reminders, deliver them.",
        version: BuzzVersion.line,
        subcommands: [
            InitCommand.self, ImportCommand.self, SyncCommand.self, ListCommand.self, UpcomingCommand.self,
            IncludeCommand.self, SkipCommand.self, TriageCommand.self,
            SetBirthdayCommand.self, ClearBirthdayCommand.self, SetAnniversaryCommand.self, ClearAnniversaryCommand.self,
            SetDateCommand.self, ClearDateCommand.self,
            ShowCommand.self, SetCommand.self, NoteCommand.self, GiftCommand.self,
            SendCommand.self, ChannelsCommand.self, DoctorCommand.self,
            TickCommand.self, RunCommand.self, OutboxCommand.self, RetryCommand.self, AskCommand.self,
            WishCommand.self, ExportCommand.self, StatusCommand.self, DigestCommand.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    public init() {}

    /// Runs the command and maps every failure to the exit statuses (docs/design/command-line.md):
    /// 0 done, 1 delivery or runtime failure, 2 the request was wrong
    /// (argument-parser's usage status 64 becomes 2).
    /// argument-parser's usage error ("Error: …", a help line, the usage, "See
    /// 'buzz upcoming --help' …") as one line (docs/design/command-line.md):
    /// `--limit must be 1 or more (see 'buzz upcoming --help')`.
    static func oneLine(_ message: String) -> String {
        let lines = message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard var first = lines.first else { return message }
        if first.hasPrefix("Error: ") { first = String(first.dropFirst("Error: ".count)) }
        guard let see = lines.first(where: { $0.hasPrefix("See '") }),
              let end = see.dropFirst(5).firstIndex(of: "'") else { return first }
        return first + " (see '" + see[see.index(see.startIndex, offsetBy: 5)..<end] + "')"
    }

    /// On the main actor, as an `@main` entry point would be: called from the
    /// executable's top-level code, a nonisolated `main` would first hop to
    /// libdispatch's pool, starting a worker (and its once-a-second monitor)
    /// before `run` could install its own executor (BuzzDaemon's DaemonRuntime.swift).
    @MainActor
    public static func main() async {
        umask(0o077)
        signal(SIGPIPE, SIG_IGN)
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The daemon's async jobs run on its own threads, set up before its first
        // job: one libdispatch worker would arm a one-second monitor for the rest
        // of its life (BuzzDaemon's DaemonRuntime.swift). `run(_:)` is
        // nonisolated, so entering it is already such a job.
        if isDaemon(arguments) { DaemonExecutor.install() }
        // The commands people run cold (`send`, `status` from a bar, `upcoming`) run
        // on this thread alone, without the hop to Swift's pool that `run` makes (a
        // thread woken on an idle vCPU here starts 1.5-3.9 ms late).
        if let fast = FastPath(arguments) { Foundation.exit(fast.runAsProcess()) }
        Foundation.exit(await run(arguments))
    }

    /// Whether a command line's command is `run`, the daemon (the global
    /// options and their values before it skipped).
    public static func isDaemon(_ arguments: [String]) -> Bool {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if ["--config", "--data-dir", "--now"].contains(argument) {
                index += 2
            } else if argument.hasPrefix("-") {
                index += 1
            } else {
                return argument == "run"
            }
        }
        return false
    }

    /// Runs one command line (without the program name) in `Invocation.current`
    /// and returns the exit status `buzz` exits with. `main` is this plus the
    /// process's umask, SIGPIPE and `exit` (and the fast paths run on the main
    /// thread alone: `FastPath.runAsProcess`); other callers (the tests) bind their
    /// own invocation and leave the process as it is. `run` (the daemon) installs
    /// its own executor, so it belongs in a process of its own.
    public static func run(_ arguments: [String]) async -> Int32 {
        if let fast = FastPath(arguments) { return await exitStatus { try await fast.run() } }
        return await run(ParsedCommandLine(arguments))
    }

    /// A command line parsed (and validated) as `run(_:)` parses it, to run once or
    /// more with `run(_:)`; nil for one `run(_:)` answers without argument-parser
    /// (`FastPath`). A parse depends on the arguments alone, so a caller that runs
    /// the same command line again may keep it: the tests do, as argument-parser's
    /// debug build checks every declaration of the commands it passes on each parse
    /// (about 7 ms of CPU).
    public static func parse(_ arguments: [String]) -> ParsedCommandLine? {
        FastPath(arguments) == nil ? ParsedCommandLine(arguments) : nil
    }

    /// Runs a parsed command line (a parse failure prints as `run(_:)` prints it).
    public static func run(_ line: ParsedCommandLine) async -> Int32 {
        await exitStatus {
            var command = try line.command.get()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        }
    }

    /// Runs a command and returns its exit status: 0, or the one its failure means
    /// (printing the failure as `run` does).
    static func exitStatus(_ command: () async throws -> Void) async -> Int32 {
        do {
            try await command()
            return 0
        } catch {
            return exitStatus(for: error)
        }
    }

    /// The exit status a command's failure means, the failure printed.
    static func exitStatus(for error: any Error) -> Int32 {
        if let error = error as? CLIError {
            printError(error.message)
            return error.status
        }
        if let error = error as? ExitCode { return error.rawValue }
        let code = exitCode(for: error).rawValue
        let message = fullMessage(for: error)
        if code == 0 {
            print(message)
            return 0
        }
        if !message.isEmpty { printError(oneLine(message)) }
        return code == ExitCode.validationFailure.rawValue ? 2 : (code == 1 ? 1 : code)
    }
}

/// What argument-parser made of a command line: the command, or why it refused it.
/// Sendable as the commands are: structs of strings, numbers, flags and enums
/// (which `any ParsableCommand` cannot promise the compiler).
public struct ParsedCommandLine: @unchecked Sendable {
    let command: Result<any ParsableCommand, any Error>

    init(_ arguments: [String]) {
        command = Result { try Buzz.parseAsRoot(arguments) }
    }
}

/// `--config`, `--data-dir`, `--now`: accepted before or after the command name.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Configuration file (default: $XDG_CONFIG_HOME/birthdaybuzz/config.toml).",
                                            valueName: "file"))
    var config: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Data directory (default: $XDG_DATA_HOME/birthdaybuzz).",
                                                              valueName: "dir"))
    var dataDir: String?

    @Option(name: .long, help: ArgumentHelp(
        "Pin the clock: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] with optional Z or ±HH:MM (local time in general.timezone without one).",
        valueName: "time"))
    var now: String?

    var settings: GlobalSettings { GlobalSettings(config: config, dataDir: dataDir, now: now) }

    func validate() throws {
        if let now, PinnedNow(now) == nil {
            throw ValidationError("--now \"\(now)\" is not a time (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM])")
        }
    }
}

/// The values of the global options, for code that runs without argument-parser
/// (`send`'s fast path, `SendFastPath.swift`).
struct GlobalSettings {
    var config: String?
    var dataDir: String?
    var now: String?
}

/// A failure with the exit status it means.
struct CLIError: Error {
    var message: String
    var status: Int32

    /// The request was wrong (usage, config, input, unknown contact): status 2.
    static func request(_ message: String) -> CLIError { CLIError(message: message, status: 2) }
    /// A runtime failure (disk, database): status 1.
    static func runtime(_ message: String) -> CLIError { CLIError(message: message, status: 1) }
}

/// One line on stderr, whatever the message quotes (`OneLine.escaped`: docs/design/command-line.md).
func printError(_ message: String) {
    Invocation.current.writeError("buzz: " + OneLine.escaped(message) + "\n")
}

func printWarning(_ message: String) {
    Invocation.current.writeError(OneLine.escaped(message) + "\n")
}

/// A command line in a plain form that skips argument-parser's reflection over
/// every command (`PlainCommandLine`): `buzz send …` (SendFastPath.swift), and
/// `buzz status`, as a status bar runs it, and `buzz upcoming`. Anything else,
/// help and usage errors included, goes the normal way.
enum FastPath {
    case send(SendRequest)
    case plain(() throws -> Void)

    init?(_ arguments: [String]) {
        if let request = SendRequest(arguments: arguments) {
            self = .send(request)
        } else if let plain = StatusCommand.fastPath(arguments) ?? UpcomingCommand.fastPath(arguments) {
            self = .plain(plain)
        } else {
            return nil
        }
    }

    func run() async throws {
        switch self {
        case .send(let request): try await request.run()
        case .plain(let plain): try plain()
        }
    }

    /// As the whole process (`Buzz.main`), on the calling thread alone; the exit status.
    func runAsProcess() -> Int32 {
        switch self {
        case .send(let request):
            return request.runAsProcess()
        case .plain(let plain):
            do {
                try plain()
                return 0
            } catch {
                return Buzz.exitStatus(for: error)
            }
        }
    }
}
