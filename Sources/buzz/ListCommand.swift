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
            // --missing: no birthday, skipped ones too with --all.
            if missing { return contact.birthday == nil && (all || contact.decision != .skip) }
            return all || contact.isIncluded
        }
        // --missing is about birthdays: no anniversary rows there.
        var entries = ListEntry.entries(chosen, today: context.today, feb29: context.config.reminders.feb29,
                                        anniversaries: !missing)
        if sort == .name {
            entries.sort {
                ($0.contact.name.lowercased(), $0.contact.id, $0.occasion == .birthday ? 0 : 1)
                    < ($1.contact.name.lowercased(), $1.contact.id, $1.occasion == .birthday ? 0 : 1)
            }
        }
        // Who was wished today (DESIGN §6a): a sent wish between local midnights.
        let today = context.today
        let wished = try runtime {
            try store.wishedContacts(sentFrom: context.clock.instant(of: today, secondsAfterMidnight: 0),
                                     to: context.clock.instant(of: today.adding(days: 1), secondsAfterMidnight: 0))
        }
        if json {
            print(JSONObject.array(entries.map { jsonRow($0, wished: wished) }))
            return
        }
        printTable(entries, wished: wished)
    }

    private func jsonRow(_ entry: ListEntry, wished: Set<String>) -> String {
        var row = JSONObject()
        row.add("contact_id", entry.contact.id)
        row.add("name", entry.contact.name)
        row.add("occasion", entry.occasion.rawValue)
        row.add("birthday", entry.contact.birthday?.description)
        row.add("anniversary", entry.contact.anniversary?.description)
        row.add("date", entry.date?.description)
        row.add("next", entry.next?.date.description)
        row.add("days_until", entry.daysUntil)
        row.add("section", entry.section.rawValue)
        row.add("age", entry.next?.age)
        row.add("buzzed", entry.contact.decision.map { $0 == .include })
        // The [sources.NAME] name, or the path as given to a one-off import.
        row.add("source", entry.contact.source)
        // The card's `BDAY;VALUE=text` ("circa 1800"), as the table shows it: only
        // when no birthday counts. null otherwise.
        row.add("birthday_note", entry.occasion == .birthday ? Self.birthdayNote(entry.contact) : nil)
        row.add("wished_today", entry.occasion == .birthday ? wished.contains(entry.contact.id) : nil)
        if missing {
            row.add("last_request_date", entry.contact.lastRequestDate)
            row.add("request_channel", entry.contact.requestChannel)
        }
        return row.json
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
        if entries.contains(where: { $0.next == nil && $0.contact.lastRequestDate == nil && $0.contact.decision != .skip }) {
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
        if entry.occasion == .anniversary {
            name += entry.next?.age.map { " (anniversary, \($0) years)" } ?? " (anniversary)"
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
