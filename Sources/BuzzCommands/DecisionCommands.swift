import ArgumentParser
import BirthdayBuzz
import BuzzStore

struct IncludeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "include", abstract: "Buzz these contacts: they get reminders.")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact ids or case-insensitive parts of names.")
    var contacts: [String]

    func run() throws {
        try decide(.include, contacts, root.global)
    }
}

struct SkipCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip", abstract: "Never buzz these contacts.")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact ids or case-insensitive parts of names.")
    var contacts: [String]

    func run() throws {
        try decide(.skip, contacts, root.global)
    }
}

/// Resolves every name first (so one unknown name changes nothing), then records the decision.
private func decide(_ decision: Decision, _ queries: [String], _ options: GlobalOptions) throws {
    let context = try Context(options)
    let store = try context.openStore()
    let found = try queries.map { try context.resolve($0, in: store) }
    try runtime { try store.setDecision(decision, for: found.map(\.id), now: context.now) }
    notifyRunningDaemon(dataDirectory: context.dataDirectory)
    for contact in found {
        let note = decision == .include && contact.birthday == nil ? " (no birthday yet: buzz set-birthday or buzz ask)" : ""
        print((decision == .include ? "included: " : "skipped: ") + contact.name + note)
    }
}

struct SetBirthdayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-birthday",
        abstract: "Enter a birthday by hand (it wins over the card's); includes an undecided contact.")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    @OptionGroup var date: DateArgument

    func run() throws {
        try Self.set(contact: contact, date: date.text, root.global)
    }

    /// `set-birthday`, and `set-date CONTACT birthday DATE`.
    static func set(contact: String, date: String, _ global: GlobalOptions) throws {
        let (context, store, found, birthday) = try enterDate("birthday", contact: contact, date: date, global) { store, id, date, now in
            try store.setManualBirthday(date, for: id, now: now)
        }
        if let note = oldYearNote(birthday, today: context.today) { printWarning("buzz: note: " + note) }
        try context.writeBirthdayBack(birthday, for: found, store: store)
    }
}

/// `set-birthday` and `set-anniversary`: the date checked, the contact found,
/// `write` called, a running daemon told, and what changed printed.
func enterDate(_ what: String, contact: String, date: String, _ global: GlobalOptions, allowsFuture: Bool = false,
               write: (BuzzDatabase, String, Birthday, Int64) throws -> Void) throws -> (Context, BuzzDatabase, Contact, Birthday) {
    let context = try Context(global)
    let entered = try enteredBirthday(date, today: context.today, allowsFuture: allowsFuture)
    let store = try context.openStore()
    let found = try context.resolve(contact, in: store)
    try runtime { try write(store, found.id, entered, context.now) }
    notifyRunningDaemon(dataDirectory: context.dataDirectory)
    let state = found.decision == .skip ? " (still skipped: buzz include to get reminders)"
        : found.decision == nil ? " (now included)" : ""
    print("\(found.name): \(what) set to \(entered)\(state)")
    return (context, store, found, entered)
}

struct ClearBirthdayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear-birthday",
        abstract: "Remove a hand-entered birthday; on the card's birthday, record \"no birthday\" (kept across re-imports).")

    @ParentCommand var root: Buzz

    @Argument(help: "Contact id or a case-insensitive part of a name.")
    var contact: String

    func run() throws {
        try Self.clear(contact: contact, root.global)
    }

    /// `clear-birthday`, and `clear-date CONTACT birthday`.
    static func clear(contact: String, _ global: GlobalOptions) throws {
        let (context, store, found, onCard) = try clearDate(
            "birthday", contact: contact, global, manual: \.manualBirthday, card: \.card.birthday, cleared: \.birthdayCleared,
            dropManual: { store, id, now in try store.setManualBirthday(nil, for: id, now: now) },
            clearCard: { store, id, now in try store.clearCardBirthday(for: id, now: now) })
        // The server's card loses its BDAY too, unless the card's birthday applies again.
        if !onCard || found.manualBirthday == nil { try context.writeBirthdayBack(nil, for: found, store: store) }
    }
}

/// `clear-birthday` and `clear-anniversary`: a hand entry goes (the card's
/// date shows again); without one, the card's date is recorded as wrong ("no
/// birthday", docs/design/identity.md), until one is entered by hand. Returns whether the
/// card's date applies now.
func clearDate(_ what: String, contact: String, _ global: GlobalOptions,
               manual: KeyPath<Contact, Birthday?>, card: KeyPath<Contact, Birthday?>, cleared: KeyPath<Contact, Bool>,
               dropManual: (BuzzDatabase, String, Int64) throws -> Void,
               clearCard: (BuzzDatabase, String, Int64) throws -> Void) throws -> (Context, BuzzDatabase, Contact, Bool) {
    let context = try Context(global)
    let store = try context.openStore()
    let found = try context.resolve(contact, in: store)
    if found[keyPath: manual] != nil {
        try runtime { try dropManual(store, found.id, context.now) }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        let fallback = found[keyPath: cleared] ? nil : found[keyPath: card]
        print("\(found.name): hand-entered \(what) cleared (" + (fallback.map { "the card's \($0) applies again" } ?? "no \(what) on file now") + ")")
        return (context, store, found, fallback != nil)
    }
    guard let onCard = found[keyPath: card] else { throw CLIError.request("\(found.name) has no \(what) to clear") }
    if !found[keyPath: cleared] {
        try runtime { try clearCard(store, found.id, context.now) }
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
    }
    print("\(found.name): the card's \(what) \(onCard) is cleared; no \(what) on file, also after re-imports (buzz set-\(what) enters one)")
    return (context, store, found, false)
}

/// The date of `set-birthday` and `set-anniversary`: one word, `MM-DD`, `--MM-DD`
/// or `YYYY-MM-DD`. `.allUnrecognized` so that `--05-06` is read as the date, not
/// as an option; an end-of-options marker (`set-birthday sam -- --05-06`) is dropped.
struct DateArgument: ParsableArguments {
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("MM-DD, --MM-DD or YYYY-MM-DD.", valueName: "date"))
    var words: [String] = []

    private var dates: [String] { words.filter { $0 != "--" } }

    /// The one date given (`validate()` has checked there is exactly one).
    var text: String { dates.first ?? "" }

    func validate() throws {
        guard dates.count == 1 else {
            throw ValidationError(dates.isEmpty ? "missing the date (MM-DD, --MM-DD or YYYY-MM-DD)"
                                                : "one date only, not \(dates.joined(separator: " "))")
        }
    }
}

/// A birthday typed by the user (`set-birthday`, `triage`): `MM-DD`, `--MM-DD` or
/// `YYYY-MM-DD`, a day that exists, not in the future.
///
/// A placeholder year (1604, 0000, 1900: `Birthday.placeholderYears`) means
/// "year unknown", as on an imported card. Any real past date is accepted, as
/// import accepts it (docs/design/identity.md); a very old year gets `oldYearNote`.
func enteredBirthday(_ text: String, today: LocalDate, allowsFuture: Bool = false) throws -> Birthday {
    let placeholder = text.count == 10 && text.dropFirst(4).hasPrefix("-")
        && Int(text.prefix(4)).map(Birthday.placeholderYears.contains) == true
    let yearless = placeholder ? "--" + text.dropFirst(5) : text
    guard let birthday = Birthday(storedForm: String(yearless)) else {
        throw CLIError.request("\"\(text)\" is not a date (MM-DD, --MM-DD or YYYY-MM-DD; the day must exist)")
    }
    if !allowsFuture, let born = birthday.dateOfBirth, born > today {
        throw CLIError.request("\(text) is in the future (today is \(today))")
    }
    return birthday
}

/// A note (not a refusal) for a year of birth more than 130 years back: maybe a
/// typo, maybe a placeholder for "year unknown" that is not one of ours.
func oldYearNote(_ birthday: Birthday, today: LocalDate) -> String? {
    guard let year = birthday.year, year < today.year - 130 else { return nil }
    return "the year \(year) is more than 130 years ago; if the year is unknown, enter MM-DD instead"
}
