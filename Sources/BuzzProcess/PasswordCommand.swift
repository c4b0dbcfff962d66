import Foundation

/// Runs `password_command` (argv, no shell, stdin closed, minimal environment)
/// and returns what it printed.
enum PasswordCommand {
    /// Besides PATH, HOME and LANG: what password stores need to reach their
    /// keys (secret-tool and the keyring over the session bus, pass and gpg's
    /// agent). None of these is a secret itself.
    static let passedThrough = ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "GNUPGHOME", "PASSWORD_STORE_DIR",
                                "GPG_TTY", "SSH_AUTH_SOCK"]

    static func run(_ argv: [String], channel: String, environment: [String: String],
                    configDirectory: String?) throws(SecretError) -> String {
        guard let program = argv.first, !program.isEmpty else {
            throw SecretError(message: "\(channel): password_command is empty")
        }
        let result: ProgramResult
        do {
            // A config folder others can write could swap the command: refuse it, as ssh does.
            if let configDirectory { try ProgramRunner.checkTrusted(directory: configDirectory) }
            let kept = passedThrough.compactMap { name in environment[name].map { (name: name, value: $0) } }
            let runner = ProgramRunner(arguments: argv, extraEnvironment: kept, timeout: 30, parentEnvironment: environment)
            result = try runner.runSynchronously(standardInput: nil)
        } catch {
            throw SecretError(message: "\(channel): password_command: \(error)")
        }
        guard result.succeeded else {
            let why = result.timedOut ? "timed out" : result.termination.description
            throw SecretError(message: "\(channel): password_command \(program) \(why)")
        }
        return String(decoding: result.standardOutput, as: UTF8.self)
    }
}
