import BirthdayBuzz
import BuzzFiles
import Foundation

/// Reads a password the config names by the one set of rules channels and
/// sources share (`password_env`, `password_file`, `password_command`): the
/// smtp channel's password and the carddav source's both come through here.
///
/// ```swift
/// let password = try SecretReader.read(.file("~/.config/mail-pw"), for: "mail",
///                                      environment: environment, configDirectory: folder,
///                                      resolvePath: { context.resolvePath($0) })
/// ```
public enum SecretReader {
    /// The secret's value: a non-empty environment variable, the first line of a
    /// file, or the first line a command printed (argv, no shell, stdin closed,
    /// a minimal environment, refused when `configDirectory` is not trusted).
    /// `owner` (the channel's or the source's name) starts every error;
    /// `resolvePath` places a file path (`~/`, relative to the config's folder).
    /// Register the value with the scrubber: this reads, it does not hide.
    public static func read(_ source: ChannelConfig.SecretSource, for owner: String, environment: [String: String],
                            configDirectory: String?, resolvePath: (String) -> String) throws(SecretError) -> String {
        switch source {
        case .environment(let variable):
            guard let value = environment[variable], !value.isEmpty else {
                throw SecretError(message: "\(owner): password_env names \(variable), which is not set")
            }
            return value
        case .file(let path):
            let resolved = resolvePath(path)
            do {
                return firstLine(try TextFile.read(resolved, limit: 1 << 20))
            } catch {
                // The reason only: a line number would point into the secret.
                throw SecretError(message: "\(owner): cannot read password_file \(resolved) (\(error.line == nil ? error.reason : "it is not UTF-8 text"))")
            }
        case .command(let argv):
            let output = try PasswordCommand.run(argv, channel: owner, environment: environment,
                                                 configDirectory: configDirectory)
            let line = firstLine(output)
            guard !line.isEmpty else {
                throw SecretError(message: "\(owner): password_command \(argv.first ?? "") printed nothing")
            }
            return line
        }
    }

    /// The first line of `text`, without its line break.
    static func firstLine(_ text: String) -> String {
        String(text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }
}

/// A secret that cannot be read: one line that starts with the channel's or the
/// source's name and says why, never the secret itself.
public struct SecretError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
