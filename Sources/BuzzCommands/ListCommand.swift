import ArgumentParser
import BirthdayBuzz
import BuzzStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The buzz list: upcoming birthdays and anniversaries by section, days until, age turning.")

    @ParentCommand var root: Buzz

    @Flag(help: "Only contacts without a birthday (with who was asked, when and how).")
    var missing = false

    @Flag(help: "Everyone, included or not (buzzed: true, false, or null when undecided).")
    var all = false

    enum SortOrder: String, ExpressibleByArgument, CaseIterable { case next, name }

    @Option(help: "Order: next (nearest birthday first) or name.")
    var sort: SortOrder = .next

    @Flag(help: "JSON output.")
    var json = false

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let contacts = try runtime { try store.allContacts() }
        let chosen = contacts.filter { contact in
            // --missing: no birthday, skipped ones too with --all; never the dead,
            // whose birthday nobody will be asked for.
            if missing { return contact.birthday == nil && (all || contact.decision != .skip) && !contact.isDeceased }
            return all || contact.isIncluded
        }
        // --missing is about birthdays: no anniversary rows there.
        let kinds = missing ? [] : OccasionKind.all.filter { context.config.reminds($0) }
        var entries = ListEntry.entries(chosen, today: context.today, feb29: context.config.reminders.feb29,
                                        kinds: kinds, prepared: try context.occasionFiles(), inMemory: all && !missing)
        if sort == .name {
            entries.sort {
                ($0.contact.name.lowercased(), $0.contact.id, $0.occasion.kind.name == "birthday" ? 0 : 1, $0.occasion.spoken)
                    < ($1.contact.name.lowercased(), $1.contact.id, $1.occasion.kind.name == "birthday" ? 0 : 1, $1.occasion.spoken)
            }
        }
        // Who was wished today (docs/design/asks-and-wishes.md): a sent wish between local midnights.
        let today = context.today
        let wished = try runtime {
            try context.ledger(store).wishedContacts(sentFrom: context.clock.instant(of: today, secondsAfterMidnight: 0),
                                     to: context.clock.instant(of: today.adding(days: 1), secondsAfterMidnight: 0))
        }
        if json {
            print(try CLIJSONEncoder.encodeLines(entries.map { ListRow($0, wished: wished, missing: missing) }))
            return
        }
        printTable(entries, wished: wished)
    }

    private func printTable(_ entries: [ListEntry], wished: Set<String>) {
        if entries.isEmpty {
            print(missing ? "Everyone has a birthday on file." : "No contacts to show. Import some: buzz import contacts.vcf")
            return
        }
        var section: ListSection?
        for entry in entries {
            if sort == .next, entry.section != section {
                if section != nil { print("") }
                section = entry.section
                print(entry.section.title)
            }
            print("  " + line(entry) + (entry.occasion == .birthday && wished.contains(entry.contact.id) ? "  (wished today)" : ""))
        }
        if entries.contains(where: { $0.section == .missing && $0.contact.lastRequestDate == nil && $0.contact.decision != .skip }) {
            print("\nAsk them for their birthday: buzz ask NAME (or buzz ask --missing); enter replies with buzz set-birthday.")
        }
    }

    private func line(_ entry: ListEntry) -> String {
        let contact = entry.contact
        var parts: [String] = []
        if let next = entry.next, let days = entry.daysUntil {
            let when = days == 0 ? "today" : days == 1 ? "tomorrow" : "in \(days) days"
            parts.append(next.date.description + "  " + padRight(when, 12))
        } else {
            parts.append(padRight("no birthday", 24))
        }
        var name = contact.name
        if entry.section == .inMemory {
            let memorial = contact.otherDates.first { $0.kind == .memorial }?.date
            let died = (memorial ?? contact.card.deathDate).map { "died \($0)" } ?? contact.card.deathText.map { "died \($0)" }
            parts[0] = padRight(contact.birthday.map { "born \($0)" } ?? "", 24)
            parts.append(name)
            if let died, contact.deceasedMark != false { parts.append(died) }
            if contact.deceasedMark == true { parts.append("(marked by hand)") }
            return parts.joined(separator: "  ")
        }
        if entry.occasion != .birthday {
            let what = entry.occasion.spoken
            name += entry.next?.age.map { " (\(what), \($0) years)" } ?? " (\(what))"
            parts.append(name)
            if all {
                parts.append(contact.decision == .include ? "[buzzed]" : contact.decision == .skip ? "[skipped]" : "[undecided]")
            }
            return parts.joined(separator: "  ")
        }
        if let age = entry.next?.age { name += " (turning \(age))" }
        parts.append(name)
        if all {
            parts.append(contact.decision == .include ? "[buzzed]" : contact.decision == .skip ? "[skipped]" : "[undecided]")
        }
        if entry.next == nil, let asked = contact.lastRequestDate {
            parts.append("asked \(asked)" + (contact.requestChannel.map { " by \($0)" } ?? ""))
        }
        if let text = Self.birthdayNote(contact) { parts.append("note: \(text)") }
        if contact.birthdayCleared, contact.manualBirthday == nil, let card = contact.card.birthday {
            parts.append("(the card's \(card) cleared)")
        }
        return parts.joined(separator: "  ")
    }

    /// The card's text BDAY when no birthday counts (the table's `note:`, JSON's `birthday_note`).
    static func birthdayNote(_ contact: Contact) -> String? {
        contact.birthday == nil ? contact.card.birthdayText : nil
    }
}

/// One `list --json` row (docs/design/command-line.md).
struct ListRow: Encodable {
    var contactID: String
    var name: String
    var occasion: String
    /// A labelled date's label; absent for the other kinds.
    var label: String?
    var birthday: String?
    var anniversary: String?
    var date: String?
    var next: String?
    var daysUntil: Int?
    var section: String
    /// Turning (or years married); null without a year.
    var age: Int?
    /// true / false, or null while undecided.
    var buzzed: Bool?
    /// The [sources.NAME] name, or the path as given to a one-off import.
    var source: String
    /// The card's `BDAY;VALUE=text` ("circa 1800"), as the table shows it: only
    /// when no birthday counts. null otherwise.
    var birthdayNote: String?
    var wishedToday: Bool?
    /// With `--missing` only: who was asked, when and how.
    var request: (date: String?, channel: String?)?

    enum CodingKeys: String, CodingKey {
        case contactID = "contact_id", name, occasion, label, birthday, anniversary, date, next, daysUntil = "days_until"
        case section, age, buzzed, source, birthdayNote = "birthday_note", wishedToday = "wished_today"
        case lastRequestDate = "last_request_date", requestChannel = "request_channel"
    }

    init(_ entry: ListEntry, wished: Set<String>, missing: Bool) {
        contactID = entry.contact.id
        name = entry.contact.name
        occasion = entry.occasion.rawValue
        label = entry.occasion.label
        birthday = entry.contact.birthday?.description
        anniversary = entry.contact.anniversary?.description
        date = entry.date?.description
        next = entry.next?.date.description
        daysUntil = entry.daysUntil
        section = entry.section.rawValue
        age = entry.next?.age
        buzzed = entry.contact.decision.map { $0 == .include }
        source = entry.contact.source
        birthdayNote = entry.occasion == .birthday ? ListCommand.birthdayNote(entry.contact) : nil
        wishedToday = entry.occasion == .birthday ? wished.contains(entry.contact.id) : nil
        request = missing ? (entry.contact.lastRequestDate, entry.contact.requestChannel) : nil
    }

    /// Synthesized but for the two `--missing` keys, which other rows leave out.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(contactID, forKey: .contactID)
        try container.encode(name, forKey: .name)
        try container.encode(occasion, forKey: .occasion)
        if let label { try container.encode(label, forKey: .label) }
        try container.encodeIfPresent(birthday, forKey: .birthday)
        try container.encodeIfPresent(anniversary, forKey: .anniversary)
        try container.encodeIfPresent(date, forKey: .date)
        try container.encodeIfPresent(next, forKey: .next)
        try container.encodeIfPresent(daysUntil, forKey: .daysUntil)
        try container.encode(section, forKey: .section)
        try container.encodeIfPresent(age, forKey: .age)
        try container.encodeIfPresent(buzzed, forKey: .buzzed)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(birthdayNote, forKey: .birthdayNote)
        try container.encodeIfPresent(wishedToday, forKey: .wishedToday)
        if let request {
            try container.encodeIfPresent(request.date, forKey: .lastRequestDate)
            try container.encodeIfPresent(request.channel, forKey: .requestChannel)
        }
    }
}

/// Left-aligns text in a column of `width` characters.
func padRight(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// Runs a store call, turning its failure into a runtime error (status 1).
func runtime<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CLIError {
        throw error
    } catch {
        throw CLIError.runtime("\(error)")
    }
}

/// `runtime(_:)` for async work.
func runtime<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as CLIError {
        throw error
    } catch {
        throw CLIError.runtime("\(error)")
    }
}
