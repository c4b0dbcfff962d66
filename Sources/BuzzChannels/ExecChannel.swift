import BirthdayBuzz
import BuzzProcess
import Foundation

/// The plugin door (docs/design/channels.md): runs the program the config names, no shell,
/// and hands it the message as one line of JSON on standard input
/// (`GenericPayload`).
///
/// The program's exit status decides the outcome: 0 delivered, 75
/// (`EX_TEMPFAIL`) try again later, anything else a permanent failure. A
/// program that runs past the channel's timeout (its whole process group is
/// stopped) or dies by a signal is a temporary failure. Errors carry the last
/// line the program wrote to standard error, with every known secret scrubbed.
///
/// ```toml
/// [channels.sms]
/// type = "exec"
/// command = ["/home/me/.config/birthdaybuzz/plugins/sms", "--device", "pixel"]
/// env = { KDECONNECT_DEVICE = "pixel" }
/// ```
public struct ExecChannel: NotificationChannel {
    /// `EX_TEMPFAIL` from sysexits.h: the plugin says the service is down for now.
    public static let temporaryFailureStatus: Int32 = 75

    public let name: String
    private let runner: ProgramRunner
    private let configDirectory: String?
    private let scrubber: SecretScrubber

    /// A channel running `options.command` with `options.environment` added to the
    /// minimal environment. `configDirectory` is the folder of the config file that
    /// names the program; it must be trusted (`ProgramRunner.checkTrusted(directory:)`)
    /// before anything runs. Nil when the config did not come from a file.
    /// `parentEnvironment` gives the program its `PATH`, `HOME` and `LANG`.
    public init(name: String, options: Options, timeout: Double, configDirectory: String?,
                scrubber: SecretScrubber, parentEnvironment: [String: String] = ProcessInfo.processInfo.environment) {
        self.name = name
        self.runner = ProgramRunner(arguments: options.command, extraEnvironment: options.environment, timeout: timeout,
                                    parentEnvironment: parentEnvironment)
        self.configDirectory = configDirectory
        self.scrubber = scrubber
        // The channel's own `env` table is where plugin tokens live: never show them.
        for variable in options.environment { scrubber.register(variable.value) }
    }

    public func deliver(_ message: Message) async throws {
        try checkConfigDirectory()
        let payload = GenericPayload.bytes(message) + [UInt8(ascii: "\n")]
        let result: ProgramResult
        do {
            result = try await runner.run(standardInput: payload)
        } catch let error as ProgramError {
            throw failure(for: error)
        }
        if result.succeeded { return }

        let program = runner.arguments.first ?? ""
        let what: String
        let temporary: Bool
        if result.timedOut {
            what = "\(program) did not finish within \(seconds(runner.timeout)) and was stopped"
            temporary = true
        } else {
            switch result.termination {
            case .exited(Self.temporaryFailureStatus):
                what = "\(program) reported a temporary failure (exit status 75)"
                temporary = true
            case .exited(let status):
                what = "\(program) exited with status \(status)"
                temporary = false
            case .signaled:
                what = "\(program) \(result.termination)"
                temporary = true
            }
        }
        let text = describe(what, stderr: result)
        throw temporary ? DeliveryError.temporary(text) : DeliveryError.permanent(text)
    }

    /// Checks the program can be found and executed with the plugin's own `PATH`,
    /// and that the config folder is trusted.
    public func validate() async throws {
        try checkConfigDirectory()
        do {
            _ = try runner.resolvedProgram()
        } catch {
            throw failure(for: error)
        }
    }

    private func checkConfigDirectory() throws(DeliveryError) {
        guard let configDirectory else { return }
        do {
            try ProgramRunner.checkTrusted(directory: configDirectory)
        } catch {
            throw failure(for: error)
        }
    }

    /// A program that cannot start, or a folder we refuse: retrying helps only
    /// when the system was short of something (processes, memory, descriptors).
    private func failure(for error: ProgramError) -> DeliveryError {
        let text = scrubber.scrub("exec channel \"\(name)\": \(error)")
        return error.code == .systemCallFailed ? .temporary(text) : .permanent(text)
    }

    /// `exec channel "NAME": WHAT: LAST STDERR LINE`, scrubbed, one line, the stderr part at most ~200 characters.
    private func describe(_ what: String, stderr result: ProgramResult) -> String {
        var text = "exec channel \"\(name)\": \(what)"
        // Scrub the whole stream before cutting a line out of it, so no secret is cut in half.
        let standardError = scrubber.scrub(String(decoding: result.standardError, as: UTF8.self))
        if let line = ProgramResult.lastLine(of: standardError) {
            text += ": " + (line.count > 200 ? String(line.prefix(200)) + "…" : line)
        } else {
            text += " (nothing on standard error)"
        }
        return scrubber.scrub(text)
    }

    private func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value)) s" : "\(value) s"
    }
}

/// `type = "exec"`: `command` (an argv array) and `env` (a table of variables
/// added to the plugin's minimal environment).
extension ExecChannel: ChannelType {
    public struct Options: Sendable {
        public var command: [String]
        /// Sorted by variable name.
        public var environment: [(name: String, value: String)] = []

        public init(command: [String], environment: [(name: String, value: String)] = []) {
            self.command = command
            self.environment = environment
        }
    }

    public static let typeName = "exec"

    /// A plugin gets the contact's address or number with the message (`"to"`), so it can send asks both ways.
    public static let capabilities: ChannelCapabilities = [.reminders, .asksByEmail, .asksBySMS]

    public static func options(from table: TableReader) throws -> Options {
        guard let command = try table.stringArray("command"), let program = command.first, !program.isEmpty else {
            throw table.problem("command", "missing: an argv array such as [\"/usr/local/bin/notify\", \"--quiet\"]")
        }
        var options = Options(command: command)
        if let env = try table.table("env") {
            for key in env.keys.sorted() {
                guard let value = try env.string(key) else { continue }
                options.environment.append((key, value))
            }
            try env.finish()
        }
        return options
    }

    public static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
        ExecChannel(name: config.name, options: options, timeout: config.timeout,
                    configDirectory: context.configDirectory, scrubber: context.scrubber,
                    parentEnvironment: context.environment)
    }

    public static func target(of options: Options, environment: [String: String]) -> String {
        "runs \(options.command.first ?? "")"
    }
}
