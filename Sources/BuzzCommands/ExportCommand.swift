import ArgumentParser
import BirthdayBuzz
import BuzzStore
import BuzzSystem
import Foundation

/// `buzz export ics`: the buzzed contacts' birthdays as an iCalendar file (docs/design/asks-and-wishes.md).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export birthdays for other programs.",
        subcommands: [ExportICSCommand.self])
}

struct ExportICSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ics",
        abstract: "The buzzed contacts' birthdays and anniversaries as an iCalendar (RFC 5545) file.",
        discussion: """
            One all-day yearly event per birthday (Feb 29 follows reminders.feb29); a date in another \
            calendar is written as single events for the next ten years. Calendar apps can subscribe to \
            the file; `buzz run` rewrites it after changes when [export] ics = "PATH" is set.
            """)

    @ParentCommand var root: Buzz

    @Option(name: [.short, .long], help: ArgumentHelp("Write to FILE (replaced atomically) instead of standard output.",
                                                     valueName: "file"))
    var output: String?

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let text = try ICSExport.render(context: context, store: store)
        guard let output else {
            Invocation.current.write(text)
            return
        }
        try AtomicFile.write(text, to: ICSExport.expand(output, context: context), what: "the calendar", mode: 0o644)
    }
}

/// Rendering and writing the calendar file, shared by `export ics` and `run`.
enum ICSExport {
    static func render(context: Context, store: BuzzDatabase) throws -> String {
        try render(context: context, store: store, today: context.today, stamp: context.now)
    }

    static func render(context: Context, store: BuzzDatabase, today: LocalDate, stamp: Int64) throws -> String {
        // The dead have only their memorials (when `[memorials]` is on): no birthdays.
        let contacts = try runtime { try store.allContacts() }.filter(\.isIncluded)
        return ICalendarExport.calendar(contacts, kinds: OccasionKind.all.filter { context.config.reminds($0) },
                                        prepared: try context.occasionFiles(), today: today,
                                        feb29: context.config.reminders.feb29, stamp: stamp)
    }

    /// `~/…` under HOME; a relative path from the config file's folder.
    static func expand(_ path: String, context: Context) -> String {
        if path == "~" || path.hasPrefix("~/") {
            let home = context.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            return home + path.dropFirst()
        }
        return path
    }

    /// The `[export] ics` path: `~/` expanded, a relative one beside the config file.
    static func configuredPath(context: Context) -> String? {
        guard let path = context.config.export.ics else { return nil }
        let expanded = expand(path, context: context)
        if expanded.hasPrefix("/") { return expanded }
        return BuzzDatabase.parentFolder(of: context.configPath) + "/" + expanded
    }
}
