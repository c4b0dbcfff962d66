import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

/// `buzz status`: one line for a status bar (docs/design/asks-and-wishes.md). Fast enough for a
/// bar that asks every minute: one read of the store through its birthday
/// index, no planning of reminders.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "One line for a status bar: today's birthdays, else the next one.",
        discussion: """
            --json: {"today":[names],"next":{"name","date","days_until"} or null,"problems":N} (next is the \
            nearest birthday after today; problems: reminders of the last 7 days that no channel delivered). \
            --waybar: waybar's custom-module JSON (text, tooltip, class "today", "soon" within 7 days, else \
            "none"; with problems, an array that also holds "problem"); text and tooltip are Pango markup, \
            names escaped in them.
            """)

    @ParentCommand var root: Buzz

    @Flag(help: "JSON output.")
    var json = false

    @Flag(help: "waybar's one-line JSON (text, tooltip, class).")
    var waybar = false

    func validate() throws {
        if json && waybar { throw ValidationError("--json and --waybar are two outputs: give one") }
    }

    func run() throws {
        try Self.show(global: root.global.settings, json: json, waybar: waybar)
    }

    /// `buzz status` without argument-parser, in the plain form `[GLOBAL…] status
    /// [--json | --waybar]` (`PlainCommandLine`): a bar starts it every few
    /// seconds, and the parser's reflection over every command is a good part of
    /// its time. Anything else (both flags, help) returns nil: the parser's turn.
    static func fastPath(_ arguments: [String]) -> (() throws -> Void)? {
        guard let line = PlainCommandLine(arguments, command: "status", flagOptions: ["--json", "--waybar"]),
              line.values.isEmpty, line.positionals.isEmpty, line.flags.count <= 1 else { return nil }
        return { try show(global: line.global, json: line.flags.contains("--json"), waybar: line.flags.contains("--waybar")) }
    }

    static func show(global: GlobalSettings, json: Bool, waybar: Bool) throws {
        let context = try Context(global)
        let store = try context.openStore()
        let today = context.today
        let feb29 = context.config.reminders.feb29
        let nearest = try runtime { try store.nearestBirthdays(today: today, feb29: feb29) }
        let todays = nearest.filter { $0.daysUntil == 0 }
        let next = todays.isEmpty ? nearest
            : try runtime { try store.nearestBirthdays(today: today.adding(days: 1), feb29: feb29) }
                .map { entry in
                    var entry = entry
                    entry.daysUntil += 1
                    return entry
                }
        // Reminders that reached nobody lately: a bar that shows only the next
        // birthday would hide that the last one was missed.
        let problems = try runtime { try context.ledger(store).problems(firedAfter: context.now - StatusLine.problemWindow) }.count
        if json {
            var object = JSONObject()
            object.add("today", todays.map(\.name))
            if let first = next.first {
                var entry = JSONObject()
                entry.add("name", first.name)
                entry.add("date", first.occurrence.date.description)
                entry.add("days_until", first.daysUntil)
                object.add("next", raw: entry.json)
            } else {
                object.add("next", raw: "null")
            }
            object.add("problems", problems)
            print(object.json)
            return
        }
        if waybar {
            var object = JSONObject()
            let status = StatusLine(today: todays, next: next, problems: problems)
            // waybar reads both as Pango markup: a name's `&` or `<` must not be markup.
            object.add("text", PangoMarkup.escaped(status.barText))
            object.add("tooltip", PangoMarkup.escaped(status.tooltip))
            // A string, or an array when a problem adds its class (waybar takes both).
            if problems > 0 {
                object.add("class", [status.cssClass, "problem"])
            } else {
                object.add("class", status.cssClass)
            }
            print(object.json)
            return
        }
        print(StatusLine(today: todays, next: next, problems: problems).plain)
    }
}

/// The words of `status`: today's birthdays, else the next one.
struct StatusLine {
    var today: [NearestBirthday]
    var next: [NearestBirthday]
    /// Reminders of the last `problemWindow` that no channel delivered.
    var problems = 0

    static let problemWindow: Int64 = 7 * 86_400

    private var problemNote: String {
        problems == 0 ? "" : problems == 1 ? "1 reminder not delivered (buzz doctor)" : "\(problems) reminders not delivered (buzz doctor)"
    }

    private static func named(_ entry: NearestBirthday) -> String {
        entry.name + (entry.occurrence.age.map { " (\($0))" } ?? "")
    }

    private static func when(_ days: Int) -> String {
        days == 1 ? "tomorrow" : "in \(days) days"
    }

    var plain: String {
        let line: String
        if !today.isEmpty {
            line = "Today: " + today.map(Self.named).joined(separator: ", ")
        } else if let first = next.first {
            line = "Next: " + next.map(Self.named).joined(separator: ", ") + " " + Self.when(first.daysUntil)
                + " (" + first.occurrence.date.description + ")"
        } else {
            line = "No birthdays on file"
        }
        return problems == 0 ? line : line + "; " + problemNote
    }

    var barText: String {
        if !today.isEmpty {
            return "🎂 " + (today.count <= 2 ? today.map(\.name).joined(separator: ", ") : today[0].name + " +\(today.count - 1)")
        }
        guard let first = next.first else { return "" }
        return "🎂 " + first.name + (next.count > 1 ? " +\(next.count - 1)" : "") + " " + (first.daysUntil == 1 ? "tomorrow" : "in \(first.daysUntil)d")
    }

    /// At most ten names, then how many more.
    private static func names(_ entries: [NearestBirthday]) -> String {
        let shown = entries.prefix(10).map(named).joined(separator: ", ")
        return entries.count > 10 ? shown + " and \(entries.count - 10) more" : shown
    }

    var tooltip: String {
        var lines: [String] = []
        if !today.isEmpty { lines.append("Today: " + Self.names(today)) }
        if let first = next.first {
            lines.append((today.isEmpty ? "" : "Next: ") + Self.names(next) + ", "
                         + Self.when(first.daysUntil) + " (" + first.occurrence.date.description + ")")
        }
        if problems > 0 { lines.append(problemNote) }
        return lines.isEmpty ? "No birthdays on file" : lines.joined(separator: "\n")
    }

    var cssClass: String {
        if !today.isEmpty { return "today" }
        if let first = next.first, first.daysUntil <= 7 { return "soon" }
        return "none"
    }
}
