import Foundation

/// Runs `password_command` (argv, no shell, stdin closed, minimal environment)
/// and returns what it printed.
enum PasswordCommand {
    static func run(_ argv: [String], channel: String, environment: [String: String], configDirectory: String?) throws -> String {
        guard let program = argv.first, !program.isEmpty else {
            throw ChannelSetupError(message: "\(channel): password_command is empty")
        }
        do {
            // A config folder others can write could swap the command: refuse it, as ssh does.
            if let configDirectory { try ProgramRunner.checkTrusted(directory: configDirectory) }
            let runner = ProgramRunner(arguments: argv, timeout: 30, parentEnvironment: environment)
            let result = try runner.runSynchronously(standardInput: nil)
            guard result.succeeded else {
                let why = result.timedOut ? "timed out" : result.termination.description
                throw ChannelSetupError(message: "\(channel): password_command \(program) \(why)")
            }
            return String(decoding: result.standardOutput, as: UTF8.self)
        } catch let error as ProgramError {
            throw ChannelSetupError(message: "\(channel): password_command: \(error)")
        }
    }
}
