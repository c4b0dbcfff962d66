import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

struct SetAnniversaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-anniversary",
        abstract: "Enter an anniversary by hand (it wins over the card's); includes an undecided contact.")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @OptionGroup var date: DateArgument

    func run() throws {
        try Self.set(contact: contact, date: date.text, root.global)
    }

    static func set(contact: String, date: String, _ global: GlobalOptions) throws {
        _ = try enterDate("anniversary", contact: contact, date: date, global) { store, id, date, now in
            try store.setManualAnniversary(date, for: id, now: now)
        }
    }
}

struct ClearAnniversaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear-anniversary",
        abstract: "Remove a hand-entered anniversary; on the card's, record \"no anniversary\" (kept across re-imports).")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    func run() throws {
        try Self.clear(contact: contact, root.global)
    }

    static func clear(contact: String, _ global: GlobalOptions) throws {
        _ = try clearDate("anniversary", contact: contact, global, manual: \.manualAnniversary, card: \.card.anniversary,
                          cleared: \.anniversaryCleared,
                          dropManual: { store, id, now in try store.setManualAnniversary(nil, for: id, now: now) },
                          clearCard: { store, id, now in try store.clearCardAnniversary(for: id, now: now) })
    }
}

/// The occasion kind a `set-date` or `clear-date` names.
func occasionKind(named word: String) throws -> OccasionKind {
    guard let kind = OccasionKind.named(word.lowercased()) else {
        throw CLIError.request("\"\(word)\" is not an occasion kind (one of: \(OccasionKind.all.map(\.name).joined(separator: ", ")))")
    }
    return kind
}

struct SetDateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-date",
        abstract: "Enter a date of any occasion kind by hand (it wins over the card's); includes an undecided contact.",
        discussion: """
            KIND is birthday, anniversary, memorial, date or nameday. A labelled date (date) takes --label \
            ("Other" without one; a label the contact already has gets " 2") and may lie in the future; the \
            others may not. A memorial date marks the contact deceased. Only the birthday is written back to \
            a CardDAV server.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @Argument(help: ArgumentHelp("The occasion kind.", valueName: "kind"))
    var kind: String

    @Option(help: ArgumentHelp("A labelled date's label, e.g. Graduation.", valueName: "label"))
    var label: String?

    @OptionGroup var date: DateArgument

    func run() throws {
        let kind = try occasionKind(named: kind)
        if label != nil, !kind.isLabelled { throw CLIError.request("--label is for labelled dates (date), not \(kind.name)") }
        switch kind {
        case .birthday: try SetBirthdayCommand.set(contact: contact, date: date.text, root.global)
        case .anniversary: try SetAnniversaryCommand.set(contact: contact, date: date.text, root.global)
        default:
            guard kind.prepare == nil else {
                throw CLIError.request("\(kind.name) dates come from [\(kind.configTable)] \(kind.fileKeys.joined(separator: ", ")), not from a contact")
            }
            // The contact first, for the labels it has (a taken one gets " 2").
            let context = try Context(root.global)
            let found = try context.resolve(contact, in: try context.openStore())
            let taken = found.otherDates.filter { $0.kind == kind }.compactMap(\.label)
            let kept = kind.isLabelled ? LabelledDate.uniqueLabel(label ?? "", among: taken) : nil
            _ = try enterDate(kept.map { "\(kind.spokenName) \"\($0)\"" } ?? kind.spokenName, contact: found.id,
                              date: date.text, root.global, allowsFuture: kind.allowsFuture) { store, id, date, now in
                try store.setHandDate(kind, label: kept, date, for: id, now: now)
            }
        }
    }
}

struct ClearDateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear-date",
        abstract: "Remove a hand-entered date of any occasion kind; on the card's, record that it has none (kept across re-imports).")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @Argument(help: ArgumentHelp("The occasion kind: birthday, anniversary, memorial, date, …", valueName: "kind"))
    var kind: String

    @Option(help: ArgumentHelp("A labelled date's label (default: Other).", valueName: "label"))
    var label: String?

    func run() throws {
        let kind = try occasionKind(named: kind)
        if label != nil, !kind.isLabelled { throw CLIError.request("--label is for labelled dates (date), not \(kind.name)") }
        switch kind {
        case .birthday: try ClearBirthdayCommand.clear(contact: contact, root.global)
        case .anniversary: try ClearAnniversaryCommand.clear(contact: contact, root.global)
        default:
            let context = try Context(root.global)
            let store = try context.openStore()
            let found = try context.resolve(contact, in: store)
            let wanted = kind.isLabelled ? (label.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 } ?? "Other") : nil
            let what = wanted.map { "\(kind.spokenName) \"\($0)\"" } ?? kind.spokenName
            let hand = found.handDates.first { $0.kind == kind && $0.label == wanted }
            let onCard = found.card.otherDates.first { $0.kind == kind && $0.label == wanted }
            if let hand, hand.date != nil {
                try runtime { try store.removeHandDate(kind, label: wanted, for: found.id) }
                notifyRunningDaemon(dataDirectory: context.dataDirectory)
                print("\(found.name): hand-entered \(what) cleared ("
                      + (onCard.map { "the card's \($0.date) applies again" } ?? "none on file now") + ")")
                return
            }
            guard let onCard else { throw CLIError.request("\(found.name) has no \(what) to clear") }
            if hand == nil {
                try runtime { try store.setHandDate(kind, label: wanted, nil, for: found.id, now: context.now) }
                notifyRunningDaemon(dataDirectory: context.dataDirectory)
            }
            print("\(found.name): the card's \(what) \(onCard.date) is cleared; none on file, also after re-imports (buzz set-date enters one)")
        }
    }
}

struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "A contact's own reminder settings; they win over its group's and [reminders].",
        discussion: "Settings not named stay as they are; --reset first removes them all (the group's and the config's apply again).")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @Option(help: ArgumentHelp("Days before, e.g. 0,7 (0 to 365).", valueName: "days"))
    var offsets: String?

    @Option(help: ArgumentHelp("Time of day, HH:MM (24-hour).", valueName: "HH:MM"))
    var time: String?

    @Option(help: ArgumentHelp("Channel names, e.g. desktop,mail.", valueName: "names"))
    var channels: String?

    @Flag(help: "Remove the contact's own settings first.")
    var reset = false

    @Flag(inversion: .prefixedNo,
          help: "Mark the contact as having died (no reminders, asks or wishes), or as living, whatever its card says.")
    var deceased: Bool?

    func validate() throws {
        guard reset || offsets != nil || time != nil || channels != nil || deceased != nil else {
            throw ValidationError("nothing to set: give --offsets, --time, --channels, --reset, --deceased or --no-deceased")
        }
    }

    /// `0,7` → [0, 7], sorted, no duplicates.
    static func parseOffsets(_ text: String) throws -> [Int] {
        var days: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let word = part.trimmingCharacters(in: .whitespaces)
            guard let day = Int(word), (0...365).contains(day) else {
                throw CLIError.request("--offsets: \"\(word)\" is not a number of days from 0 to 365 (e.g. 0,7)")
            }
            if !days.contains(day) { days.append(day) }
        }
        return days.sorted()
    }

    func run() throws {
        let context = try Context(root.global)
        var wanted = ContactSettings()
        if let offsets { wanted.offsets = try Self.parseOffsets(offsets) }
        if let time {
            guard let minutes = ValueFormats.timeOfDay(time) else {
                throw CLIError.request("--time: \"\(time)\" is not a time of day (HH:MM, 24-hour)")
            }
            wanted.time = minutes
        }
        if let channels {
            let names = channels.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty else { throw CLIError.request("--channels: name at least one channel") }
            for name in names where context.config.resolvedChannel(named: name) == nil {
                throw CLIError.request("--channels: no channel named \"\(name)\" (define [channels.\(name)] in \(context.configPath))")
            }
            var unique: [String] = []
            for name in names where !unique.contains(name) { unique.append(name) }
            wanted.channels = unique
        }
        let store = try context.openStore()
        let found = try context.resolve(contact, in: store)
        if let deceased {
            // A hand decision, kept apart from the card: it survives re-import,
            // and --no-deceased wins over a card's date of death.
            try runtime { try store.setDeceased(deceased, for: found.id, now: context.now) }
            print(deceased ? "\(found.name): in memory (deceased); no reminders, asks or wishes"
                           : "\(found.name): living" + (found.card.hasDeathDate ? " (the card's date of death is ignored)" : ""))
            guard reset || offsets != nil || time != nil || channels != nil else {
                notifyRunningDaemon(dataDirectory: context.dataDirectory)
                return
            }
        }
        var settings = reset ? ContactSettings() : (found.settings ?? ContactSettings())
        if let offsets = wanted.offsets { settings.offsets = offsets }
        if let time = wanted.time { settings.time = time }
        if let channels = wanted.channels { settings.channels = channels }
        try runtime { try store.setContactSettings(settings.isEmpty ? nil : settings, for: found.id, now: context.now) }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        let planner = try context.planner()
        var planning = found.planning
        planning.settings = settings.isEmpty ? nil : settings
        let route = planner.route(for: planning, occasion: .birthday)
        print("\(found.name): reminders \(route.offsets.map(String.init).joined(separator: ",")) day(s) before at "
              + "\(formatTime(route.time)) → \(route.channels.joined(separator: ", "))"
              + (settings.isEmpty ? " (the group's and the config's settings)" : ""))
    }
}

/// `HH:MM` for minutes after midnight.
func formatTime(_ minutes: Int) -> String {
    let h = minutes / 60, m = minutes % 60
    return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
}

/// The words of a note or gift idea as one line of text.
private func noteText(_ words: [String], what: String) throws -> String {
    let text = words.joined(separator: " ").split(whereSeparator: \.isNewline).joined(separator: " ")
        .trimmingCharacters(in: .whitespaces)
    guard !text.isEmpty else { throw CLIError.request("the \(what) is empty") }
    return text
}

struct NoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "note", abstract: "Keep a note about a contact (buzz show lists them; templates get `notes`).")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @Argument(help: "The note.")
    var text: [String]

    func run() throws {
        let context = try Context(root.global)
        let note = try noteText(text, what: "note")
        let store = try context.openStore()
        let found = try context.resolve(contact, in: store)
        try runtime { try store.addNote(.note, note, for: found.id, now: context.now) }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        print("\(found.name): note kept")
    }
}

struct GiftCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gift",
        abstract: "Keep a gift idea for a contact, or mark one done (--done N, as buzz show numbers them).",
        discussion: "Open gift ideas are listed in the reminders before the day.")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @Argument(help: "The gift idea.")
    var idea: [String] = []

    @Option(help: ArgumentHelp("Mark the N-th open gift idea done (from 1, as buzz show lists them).", valueName: "N"))
    var done: Int?

    func validate() throws {
        if let done {
            guard idea.isEmpty else { throw ValidationError("either a gift idea or --done N, not both") }
            guard done >= 1 else { throw ValidationError("--done counts from 1") }
        } else if idea.isEmpty {
            throw ValidationError("missing the gift idea (or --done N)")
        }
    }

    func run() throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let found = try context.resolve(contact, in: store)
        if let done {
            let open = try runtime { try store.notes(for: found.id) }.filter { $0.kind == .gift && $0.doneAt == nil }
            guard done <= open.count else {
                throw CLIError.request("--done \(done): \(found.name) has \(open.count == 0 ? "no" : "\(open.count)") open gift idea"
                                       + (open.count == 1 ? "" : "s") + "; buzz show \"\(contact)\" lists them")
            }
            let idea = open[done - 1]
            try runtime { try store.markGiftDone(noteID: idea.id, now: context.now) }
            notifyRunningDaemon(dataDirectory: context.dataDirectory)
            print("\(found.name): gift idea \(done) done (\(idea.text))")
            return
        }
        let text = try noteText(idea, what: "gift idea")
        try runtime { try store.addNote(.gift, text, for: found.id, now: context.now) }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        let count = try runtime { try store.notes(for: found.id) }.filter { $0.kind == .gift && $0.doneAt == nil }.count
        print("\(found.name): gift idea \(count) kept")
    }
}
