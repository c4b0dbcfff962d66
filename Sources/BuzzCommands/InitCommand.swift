import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a commented starter config (asks for time zone and language on a TTY).")

    @ParentCommand var root: Buzz

    @Flag(help: "Overwrite an existing config file.")
    var force = false

    func run() throws {
        let environment = Invocation.current.environment
        let path = Context.configPath(root.global.settings, environment: environment).path
        if FileManager.default.fileExists(atPath: path), !force {
            throw CLIError.request("\(path) already exists; edit it, or run `buzz init --force` to replace it")
        }
        var text = ExampleConfig.text
        if Invocation.current.inputIsTerminal, Invocation.current.outputIsTerminal {
            let systemZone = Invocation.current.systemTimeZone.identifier
            let zone = ask("Time zone for reminders", default: systemZone) { TimeZone(identifier: $0) != nil }
            let locale = ask("Language for messages", default: ValueFormats.localeFromEnvironment(environment)) {
                ValueFormats.bcp47(fromPOSIX: $0) != nil
            }
            let time = ask("Time of day for reminders (HH:MM)", default: "09:00") { ValueFormats.timeOfDay($0) != nil }
            text = text.replacingOccurrences(of: "# timezone = \"Europe/Berlin\"", with: "timezone = \"\(zone)\"")
                .replacingOccurrences(of: "# locale = \"en\"", with: "locale = \"\(ValueFormats.bcp47(fromPOSIX: locale) ?? "en")\"")
                .replacingOccurrences(of: "time = \"09:00\"", with: "time = \"\(time)\"")
        }
        // Check what we write parses, so `init` never leaves a broken file.
        do {
            _ = try BuzzConfig(toml: text, file: path, environment: environment, systemTimeZone: .current,
                               types: Context.configTypes)
        } catch {
            throw CLIError.runtime("internal: the starter config does not validate: \(error)")
        }
        let directory = BuzzDatabase.parentFolder(of: path)
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        // 0600 from the first byte: a config may hold an SMTP password.
        try AtomicFile.write(text, to: path, what: "the config", mode: 0o600)
        print("wrote \(path)")
        print("next: buzz import ~/contacts.vcf   then: buzz list")
    }

    private func ask(_ question: String, default value: String, valid: (String) -> Bool) -> String {
        while true {
            print("\(question) [\(value)]: ", terminator: "")
            guard let line = readLine() else { return value }
            let answer = line.trimmingCharacters(in: .whitespaces)
            if answer.isEmpty { return value }
            if valid(answer) { return answer }
            print("  \"\(answer)\" is not valid here; try again or press Enter for \(value).")
        }
    }
}
