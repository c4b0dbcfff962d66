import ArgumentParser
import BirthdayBuzz
import BuzzStore

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Everything about one contact: dates, decisions, settings, notes, gift ideas, next reminders, history.")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @Flag(help: "JSON output.")
    var json = false

    /// How many next events `show` lists.
    static let nextLimit = 12

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let found = try context.resolve(contact, in: store)
        let notes = try runtime { try store.notes(for: found.id) }
        let history = try runtime { try context.ledger(store).history(for: found.id) }
        let openGifts = notes.filter { $0.kind == .gift && $0.doneAt == nil }
        let doneGifts = notes.filter { $0.kind == .gift && $0.doneAt != nil }
        let plainNotes = notes.filter { $0.kind == .note }

        let planner = try context.planner()
        var planning = found.planning
        planning.giftIdeas = openGifts.map(\.text)
        planning.notes = plainNotes.map(\.text)
        let recorded = try runtime {
            try context.ledger(store).recorded(around: context.now, planner: planner, contacts: [planning])
        }
        // The dead have nothing next but their memorials (when [memorials] is on).
        let next = planner.upcoming([planning], now: context.now, limit: Self.nextLimit, recorded: recorded)
        let sources = settingSources(found, config: context.config)
        let birthdayRoute = planner.route(for: planning, occasion: .birthday)
        let anniversaryRoute = planner.route(for: planning, occasion: .anniversary)
        let clock = context.clock
        // A deceased contact's scheduled wish is never sent (the next pass closes it): not listed.
        let scheduledWishes = found.isDeceased ? []
            : history.filter { $0.kind == .wish && [.pending, .retrying].contains($0.state) }

        if json {
            var row = JSONObject()
            row.add("contact_id", found.id)
            row.add("name", found.name)
            row.add("birthday", found.birthday?.description)
            row.add("birthday_from", Self.birthdayFrom(found))
            row.add("anniversary", found.anniversary?.description)
            row.add("anniversary_from", Self.anniversaryFrom(found))
            row.add("source", found.source)
            row.add("buzzed", found.decision.map { $0 == .include })
            row.add("deceased", found.isDeceased)
            row.add("deceased_from", Self.deceasedFrom(found))
            row.add("death_date", found.card.deathDate?.description ?? found.card.deathText)
            row.add("dates", raw: "[" + Self.otherDates(found).map { item in
                var entry = JSONObject()
                entry.add("occasion", item.date.kind.name)
                entry.add("label", item.date.label)
                entry.add("date", item.date.date.description)
                entry.add("from", item.from)
                return entry.json
            }.joined(separator: ",") + "]")
            row.add("time_zone", found.card.timeZone?.description)
            var settings = JSONObject()
            settings.add("offsets", raw: intArray(birthdayRoute.offsets))
            settings.add("offsets_from", sources.offsets)
            settings.add("time", formatTime(birthdayRoute.time))
            settings.add("time_from", sources.time)
            settings.add("channels", birthdayRoute.channels)
            settings.add("channels_from", sources.channels)
            settings.add("anniversary_offsets", raw: intArray(anniversaryRoute.offsets))
            settings.add("anniversary_offsets_from", sources.anniversaryOffsets)
            settings.add("anniversary_channels", anniversaryRoute.channels)
            settings.add("anniversary_channels_from", sources.anniversaryChannels)
            row.add("settings", raw: settings.json)
            row.add("notes", raw: "[" + plainNotes.map { note in
                var item = JSONObject()
                item.add("text", note.text)
                item.add("at", clock.iso8601(note.createdAt))
                return item.json
            }.joined(separator: ",") + "]")
            row.add("gift_ideas", raw: "[" + openGifts.enumerated().map { index, gift in
                var item = JSONObject()
                item.add("n", index + 1)
                item.add("text", gift.text)
                item.add("at", clock.iso8601(gift.createdAt))
                return item.json
            }.joined(separator: ",") + "]")
            row.add("gift_ideas_done", raw: "[" + doneGifts.map { gift in
                var item = JSONObject()
                item.add("text", gift.text)
                item.add("at", clock.iso8601(gift.createdAt))
                item.add("done_at", gift.doneAt.map(clock.iso8601))
                return item.json
            }.joined(separator: ",") + "]")
            // A scheduled wish (`buzz wish --at`) is listed first among the next events, as `upcoming` has it.
            let wishJSON = try scheduledWishes.map { try CLIJSONEncoder.encode(UpcomingRow(wish: $0, name: found.name, clock: clock)) }
            row.add("next", raw: "[" + (wishJSON + (try next.map { try upcomingJSON($0, clock: clock) })).joined(separator: ",") + "]")
            row.add("history", raw: "[" + history.map { entry in
                var item = JSONObject()
                item.add("id", entry.eventID)
                item.add("channel", entry.channel)
                item.add("kind", SQLiteLedger.kindName(entry.kind))
                item.add("status", entry.state.rawValue)
                item.add("at", clock.iso8601(entry.sentAt ?? entry.fireAt))
                item.add("error", entry.lastError)
                item.add("via", entry.via?.label)
                return item.json
            }.joined(separator: ",") + "]")
            print(row.json)
            return
        }

        print(found.name + "  (" + found.id + ")")
        let decision = found.decision == .include ? "buzzed" : found.decision == .skip ? "skipped" : "undecided"
        print("  decision:     \(decision)")
        print("  source:       \(found.source.isEmpty ? "-" : found.source)")
        if found.isDeceased {
            let died = found.card.deathDate.map { ", died \($0)" } ?? found.card.deathText.map { ", died \($0)" } ?? ""
            print("  in memory:    deceased (\(Self.deceasedFrom(found) ?? "card")\(died)); no reminders, asks or wishes")
        } else if found.deceasedMark == false, found.card.hasDeathDate {
            print("  living:       marked by hand (the card's date of death is ignored)")
        }
        print("  birthday:     " + (found.birthday.map { "\($0) (\(Self.birthdayFrom(found) ?? "card"))" }
                                   ?? (found.birthdayCleared ? "none (the card's cleared by hand)" : "none")))
        if let zone = found.card.timeZone { print("  time zone:    \(zone)") }
        print("  anniversary:  " + (found.anniversary.map { "\($0) (\(Self.anniversaryFrom(found) ?? "card"))" }
                                   ?? (found.anniversaryCleared ? "none (the card's cleared by hand)" : "none")))
        print("  reminders:    \(birthdayRoute.offsets.map(String.init).joined(separator: ",")) day(s) before "
              + "(\(sources.offsets)) at \(formatTime(birthdayRoute.time)) (\(sources.time)) → "
              + "\(birthdayRoute.channels.joined(separator: ", ")) (\(sources.channels))")
        for item in Self.otherDates(found) {
            let what = item.date.label.map { "\(item.date.kind.spokenName) \"\($0)\"" } ?? item.date.kind.spokenName
            print("  \(what): \(item.date.date) (\(item.from))")
        }
        if found.anniversary != nil {
            print("  anniversary reminders: \(anniversaryRoute.offsets.map(String.init).joined(separator: ",")) day(s) "
                  + "before (\(sources.anniversaryOffsets)) → \(anniversaryRoute.channels.joined(separator: ", ")) "
                  + "(\(sources.anniversaryChannels))")
        }
        if !plainNotes.isEmpty {
            print("  notes:")
            for note in plainNotes { print("    - \(note.text)  (\(clock.localDate(at: note.createdAt)))") }
        }
        if !openGifts.isEmpty {
            print("  gift ideas:")
            for (index, gift) in openGifts.enumerated() { print("    \(index + 1). \(gift.text)") }
        }
        if !doneGifts.isEmpty {
            print("  gifts done:")
            for gift in doneGifts { print("    - \(gift.text)") }
        }
        print("  next:")
        for wish in scheduledWishes {
            print("    wish scheduled " + WishFlow.when(wish, contact: found, ours: clock))
        }
        if next.isEmpty, scheduledWishes.isEmpty { print("    nothing planned") }
        for event in next { print("    " + upcomingLine(event, clock: clock)) }
        if !history.isEmpty {
            print("  history:")
            for entry in history {
                print("    \(clock.iso8601(entry.sentAt ?? entry.fireAt))  \(entry.eventID) via \(entry.channel): \(entry.state.rawValue)"
                      + (entry.via.map { " (\($0.label))" } ?? ""))
            }
        }
    }

    /// Where the birthday that counts comes from: "card", "hand", "cleared" (by hand), or nil (none on file).
    static func birthdayFrom(_ contact: Contact) -> String? {
        if contact.manualBirthday != nil { return "hand" }
        if contact.birthdayCleared { return "cleared" }
        return contact.card.birthday != nil ? "card" : nil
    }

    /// Why a contact counts as deceased: "hand" (`set --deceased`), "card" (a
    /// date of death on its card), or nil when it does not.
    static func deceasedFrom(_ contact: Contact) -> String? {
        guard contact.isDeceased else { return nil }
        return contact.deceasedMark == true ? "hand" : "card"
    }

    /// The dates of the other kinds that count, each with where it comes from (card or hand).
    static func otherDates(_ contact: Contact) -> [(date: OccasionDate, from: String)] {
        contact.otherDates.map { date in
            let hand = contact.handDates.contains { $0.kind == date.kind && $0.label == date.label && $0.date != nil }
            return (date, hand ? "hand" : "card")
        }
    }

    static func anniversaryFrom(_ contact: Contact) -> String? {
        if contact.manualAnniversary != nil { return "hand" }
        if contact.anniversaryCleared { return "cleared" }
        return contact.card.anniversary != nil ? "card" : nil
    }
}

/// Where each of a contact's reminder settings comes from: "contact", "group",
/// "anniversaries" or "reminders" (docs/design/occasions.md precedence).
private func settingSources(_ contact: Contact, config: BuzzConfig)
    -> (offsets: String, time: String, channels: String, anniversaryOffsets: String, anniversaryChannels: String) {
    let own = contact.settings
    let group = config.group(forCategories: contact.card.categories)
    let offsets = own?.offsets != nil ? "contact" : group?.offsets != nil ? "group" : "reminders"
    let time = own?.time != nil ? "contact" : "reminders"
    let channels = own?.channels != nil ? "contact" : group?.channels != nil ? "group" : "reminders"
    let anniversaryOffsets = own?.offsets != nil ? "contact" : "anniversaries"
    let anniversaryChannels = own?.channels != nil ? "contact" : config.anniversaries.channels != nil ? "anniversaries"
        : group?.channels != nil ? "group" : "reminders"
    return (offsets, time, channels, anniversaryOffsets, anniversaryChannels)
}

private func intArray(_ values: [Int]) -> String {
    "[" + values.map(String.init).joined(separator: ",") + "]"
}
