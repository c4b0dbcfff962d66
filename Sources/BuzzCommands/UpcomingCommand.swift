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
        try Self.show(global: root.global.settings, days: days, limit: limit, json: json)
    }

    /// `buzz upcoming` without argument-parser, in the plain form `[GLOBAL…]
    /// upcoming [--days N] [--limit N] [--json]` (`PlainCommandLine`); a value
    /// that is not a number in range, a repeat or anything else returns nil:
    /// the parser's turn, with its messages.
    static func fastPath(_ arguments: [String]) -> (() throws -> Void)? {
        guard let line = PlainCommandLine(arguments, command: "upcoming", valueOptions: ["--days", "--limit"],
                                          flagOptions: ["--json"]),
              line.positionals.isEmpty else { return nil }
        var days: Int?, limit: Int?
        for (name, value) in line.values {
            guard let number = Int(value) else { return nil }
            if name == "--days" {
                guard days == nil, number >= 0 else { return nil }
                days = number
            } else {
                guard limit == nil, number >= 1 else { return nil }
                limit = number
            }
        }
        return { try show(global: line.global, days: days, limit: limit, json: line.flags.contains("--json")) }
    }

    static func show(global: GlobalSettings, days: Int?, limit: Int?, json: Bool) throws {
        let context = try Context(global)
        let store = try context.openStore()
        let planner = try context.planner()
        var until: Int64?
        if let days {
            let endDay = context.today.adding(days: days + 1)
            until = context.clock.instant(of: endDay, secondsAfterMidnight: 0) - 1
        }
        // What the ledger already holds is not planned again (a reminder sent
        // before `reminders.time` moved later is not listed a second time).
        let largestOwnOffset = try runtime { try store.largestOwnOffset() }
        let recorded = try runtime {
            try context.ledger(store).recorded(around: context.now, planner: planner, largestOwnOffset: largestOwnOffset)
        }
        let limit = limit ?? context.config.reminders.maxPending
        // Only the contacts whose dates fall near the window are read (docs/design/reminders.md).
        let events = try runtime {
            try planner.upcoming(now: context.now, until: until, limit: limit, recorded: recorded,
                                 largestOwnOffset: largestOwnOffset) { keys, perKey in
                try store.plannableContacts(for: planner, within: keys, perKey: perKey)
            }
        }
        // The scheduled digests ([digests.NAME]) among them, by fire time; each counts against the limit.
        let digests = try runtime { try upcomingDigests(context: context, store: store, until: until) }
        // And the wishes scheduled with `buzz wish --at`.
        let wishes = try runtime { try UpcomingRow.scheduledWishes(ledger: context.ledger(store), store: store, now: context.now, until: until) }
        let wishNames = try runtime { try store.contactNames(ids: wishes.map(\.contactID)) }
        let rows = UpcomingRow.merged(events, digests, clock: context.clock, limit: limit, wishes: wishes.map { ($0, wishNames[$0.contactID] ?? $0.contactID) })
        if json {
            print(try CLIJSONEncoder.encodeLines(rows.map(\.row)))
            return
        }
        if rows.isEmpty {
            if let days, try !wishes.isEmpty || runtime({ try store.hasPlannableContacts(for: planner) }) {
                print("Nothing planned in the next \(days) day\(days == 1 ? "" : "s").")
            } else {
                print("Nothing planned. Import contacts (buzz import FILE) and include them (buzz triage).")
            }
            return
        }
        for row in rows {
            print(row.line)
        }
    }

    /// Digest sends after now (each digest's next one; with `--days`, every one up
    /// to `until`) that the ledger does not hold yet.
    private static func upcomingDigests(context: Context, store: BuzzDatabase, until: Int64?) throws -> [DigestEvent] {
        let schedule = DigestSchedule(config: context.config)
        guard !schedule.digests.isEmpty else { return [] }
        let now = context.now
        // Without --days: each digest's next send the ledger does not hold (one already
        // sent, say with the clock set back, gives way to the one after it); a monthly
        // digest fires twice in any 62 days.
        let events = schedule.events(after: now, upTo: until ?? now + 62 * 86_400)
        guard let last = events.last?.fireAt else { return [] }
        let recorded = try context.ledger(store).keys(firedAfter: now - 2 * 86_400, upTo: last + 2 * 86_400)
        var listed: Set<String> = []
        return events.compactMap { event in
            var left = event
            left.channels = event.channels.filter { !recorded.contains(LedgerKey(eventID: event.id, channel: $0)) }
            guard !left.channels.isEmpty, until != nil || listed.insert(event.name).inserted else { return nil }
            return left
        }
    }
}

/// One `upcoming --json` entry (docs/design/command-line.md; also `show --json`'s `next`).
struct UpcomingRow: Encodable {
    var id: String
    /// null for a digest.
    var contactID: String?
    var name: String
    var occasion: String
    /// A labelled date's label; the key is left out for the other kinds.
    var label: String?
    var occurrence: String
    var offsetDays: Int
    /// ISO 8601 with the UTC offset of `general.timezone`.
    var fireAt: String
    var channels: [String]

    enum CodingKeys: String, CodingKey {
        case id, contactID = "contact_id", name, occasion, label, occurrence, offsetDays = "offset_days", fireAt = "fire_at"
        case channels
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(contactID, forKey: .contactID)
        try container.encode(name, forKey: .name)
        try container.encode(occasion, forKey: .occasion)
        if let label { try container.encode(label, forKey: .label) }
        try container.encode(occurrence, forKey: .occurrence)
        try container.encode(offsetDays, forKey: .offsetDays)
        try container.encode(fireAt, forKey: .fireAt)
        try container.encode(channels, forKey: .channels)
    }

    init(_ event: PlannedEvent, clock: WallClock) {
        id = event.id
        contactID = event.contactID
        name = event.name
        occasion = event.occasion.rawValue
        label = event.occasion.label
        occurrence = event.occurrence.description
        offsetDays = event.offsetDays
        fireAt = clock.iso8601(event.fireAt)
        channels = event.channels
    }

    /// A digest send: `"occasion": "digest"`, no contact, `name` the digest's name,
    /// `occurrence` the day it fires, offset 0.
    init(_ event: DigestEvent, clock: WallClock) {
        id = event.id
        contactID = nil
        name = event.name
        occasion = "digest"
        occurrence = event.date.description
        offsetDays = 0
        fireAt = clock.iso8601(event.fireAt)
        channels = event.channels
    }

    /// Reminders and digests in one list by fire time (ties: reminders first), at most `limit`.
    static func merged(_ events: [PlannedEvent], _ digests: [DigestEvent], clock: WallClock,
                       limit: Int, wishes: [(row: LedgerRow, name: String)] = []) -> [(row: UpcomingRow, line: String)] {
        // `order`: the planner's own order for reminders (already nearest first), then each digest's.
        var items: [(fireAt: Int64, digest: Bool, order: Int, row: UpcomingRow, line: String)] = []
        for (index, event) in events.enumerated() {
            items.append((event.fireAt, false, index, UpcomingRow(event, clock: clock), upcomingLine(event, clock: clock)))
        }
        for (index, event) in digests.enumerated() {
            items.append((event.fireAt, true, index, UpcomingRow(event, clock: clock),
                          "\(clock.iso8601(event.fireAt))  digest \(event.name) (\(event.date)) → \(event.channels.joined(separator: ", "))"))
        }
        for (index, wish) in wishes.enumerated() {  // sorted with the digests (after reminders at the same time)
            items.append((wish.row.fireAt, true, digests.count + index, UpcomingRow(wish: wish.row, name: wish.name, clock: clock),
                          wishLine(wish.row, name: wish.name, clock: clock)))
        }
        if digests.isEmpty, wishes.isEmpty { return items.prefix(limit).map { ($0.row, $0.line) } }
        items.sort { a, b in
            if a.fireAt != b.fireAt { return a.fireAt < b.fireAt }
            if a.digest != b.digest { return !a.digest }
            return a.order < b.order
        }
        return items.prefix(limit).map { ($0.row, $0.line) }
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
    if event.occasion == .birthday {
        what = event.age.map { ", turning \($0)" } ?? ""
    } else {
        what = ", " + event.occasion.spoken + (event.age.map { ", \($0) years" } ?? "")
    }
    return "\(clock.iso8601(event.fireAt))  \(event.name) — \(when) (\(event.occurrence)\(what)) → \(event.channels.joined(separator: ", "))"
}
