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
            print(JSONObject.array(events.map { upcomingJSON($0, clock: context.clock) }))
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

/// One `upcoming --json` entry (also `show --json`'s `next`).
func upcomingJSON(_ event: PlannedEvent, clock: WallClock) -> String {
    var row = JSONObject()
    row.add("id", event.id)
    row.add("contact_id", event.contactID)
    row.add("name", event.name)
    row.add("occasion", event.occasion.rawValue)
    row.add("occurrence", event.occurrence.description)
    row.add("offset_days", event.offsetDays)
    row.add("fire_at", clock.iso8601(event.fireAt))
    row.add("channels", event.channels)
    return row.json
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
