import ArgumentParser
import BirthdayBuzz
import BuzzStore

struct UpcomingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upcoming",
        abstract: "Planned reminder events that fire after now, nearest first.")

    @ParentCommand var root: Buzz

    // `.unconditional`: `--days -1` reaches validate() and its message, instead
    // of argument-parser reading -1 as an option ("Missing value for '--days'").
    @Option(parsing: .unconditional, help: "Only events up to the end of the local day N days ahead (every occurrence in that window).")
    var days: Int?

    @Option(parsing: .unconditional, help: "At most N events (may exceed reminders.max_pending, the default).")
    var limit: Int?

    @Flag(help: "JSON output.")
    var json = false

    func validate() throws {
        if let days, days < 0 { throw ValidationError("--days must be 0 or more") }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
    }

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let contacts = try runtime { try store.plannableContacts() }
        let planner = Planner(config: context.config, defaultChannels: context.defaultChannels)
        var until: Int64?
        if let days {
            let endDay = context.today.adding(days: days + 1)
            until = context.clock.instant(of: endDay, secondsAfterMidnight: 0) - 1
        }
        // What the ledger already holds is not planned again (a reminder sent
        // before `reminders.time` moved later is not listed a second time).
        let recorded = try runtime {
            try SQLiteLedger(store).recorded(around: context.now, planner: planner, contacts: contacts)
        }
        let events = planner.upcoming(contacts, now: context.now, until: until,
                                      limit: limit ?? context.config.reminders.maxPending, recorded: recorded)
        if json {
            print(try CLIJSONEncoder.encodeLines(events.map { UpcomingRow($0, clock: context.clock) }))
            return
        }
        if events.isEmpty {
            if let days, !contacts.isEmpty {
                print("Nothing planned in the next \(days) day\(days == 1 ? "" : "s").")
            } else {
                print("Nothing planned. Import contacts (buzz import FILE) and include them (buzz triage).")
            }
            return
        }
        for event in events {
            print(upcomingLine(event, clock: context.clock))
        }
    }
}

/// One `upcoming --json` entry (DESIGN §4; also `show --json`'s `next`).
struct UpcomingRow: Encodable {
    var id: String
    var contactID: String
    var name: String
    var occasion: String
    var occurrence: String
    var offsetDays: Int
    /// ISO 8601 with the UTC offset of `general.timezone`.
    var fireAt: String
    var channels: [String]

    enum CodingKeys: String, CodingKey {
        case id, contactID = "contact_id", name, occasion, occurrence, offsetDays = "offset_days", fireAt = "fire_at", channels
    }

    init(_ event: PlannedEvent, clock: WallClock) {
        id = event.id
        contactID = event.contactID
        name = event.name
        occasion = event.occasion.rawValue
        occurrence = event.occurrence.description
        offsetDays = event.offsetDays
        fireAt = clock.iso8601(event.fireAt)
        channels = event.channels
    }
}

/// One `upcoming --json` entry as text, for `show --json`'s `next` (still built with `JSONObject`).
func upcomingJSON(_ event: PlannedEvent, clock: WallClock) throws -> String {
    try CLIJSONEncoder.encode(UpcomingRow(event, clock: clock))
}

/// One `upcoming` line: when it fires, whose, which occasion, and where it goes.
func upcomingLine(_ event: PlannedEvent, clock: WallClock) -> String {
    let when = event.offsetDays == 0 ? "on the day" : event.offsetDays == 1 ? "1 day before" : "\(event.offsetDays) days before"
    let what: String
    switch event.occasion {
    case .birthday: what = event.age.map { ", turning \($0)" } ?? ""
    case .anniversary: what = ", anniversary" + (event.age.map { ", \($0) years" } ?? "")
    }
    return "\(clock.iso8601(event.fireAt))  \(event.name) — \(when) (\(event.occurrence)\(what)) → \(event.channels.joined(separator: ", "))"
}
