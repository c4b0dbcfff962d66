import Foundation

/// One kind of occasion — a birthday, an anniversary, … — as data: where its
/// dates come from, how its events are named, which config table and template
/// it uses, and its defaults. The planner, event ids, the ledger, the
/// templates, `list`/`show`/`upcoming`/`export ics`/`status`, the channels'
/// urgency and category and the config checks all read a kind from here, so a
/// new kind is one file that makes an `OccasionKind` plus one line in
/// `OccasionKind.all` (and its templates).
///
/// Each kind is one shared instance (planning compares and passes kinds by
/// reference: no descriptor is copied per contact); kinds are equal by `name`.
public final class OccasionKind: Sendable, Hashable, CustomStringConvertible {
    /// `birthday`, `anniversary`, …: the `"occasion"` of JSON output, the kind
    /// that `set-date` and `clear-date` take, and (but for birthdays) the second
    /// part of an event id.
    public let name: String
    /// How people say it, for sentences: "birthday", "name day".
    public let spokenName: String
    /// The card properties its dates are read from (what `show` names as the source).
    public let cardProperties: [String]
    /// The config table with its `enabled`, `offsets`, `channels`, `fallback`
    /// and `fallback_after` (`reminders` for birthdays, whose table holds more).
    public let configTable: String
    /// Keys of its config table that name a file the wiring reads and hands to
    /// `prepare` (the name-day calendar): the core library reads no files.
    public let fileKeys: [String]
    /// The template its reminders use (`reminder.mustache` for birthdays).
    public let template: String
    /// The message kind of its reminders (`birthday.reminder`, …): what channels see.
    public let messageKind: String
    /// The ledger's `kind` column for its reminders (`reminder` for birthdays).
    public let ledgerName: String
    /// Reminded of when the config does not say (`enabled`).
    public let enabledByDefault: Bool
    /// Days before, when the config does not say (`offsets`).
    public let defaultOffsets: [Int]
    /// Dates carry a label (`date:<label>` in ids): many dates per contact.
    public let isLabelled: Bool
    /// A date entered by hand may lie in the future (a wedding next year).
    public let allowsFuture: Bool
    /// Planned only for deceased contacts (memorials), instead of only for the living.
    public let isForTheDeceased: Bool
    /// Planned for every included contact, with or without a birthday: its dates
    /// come from the contact's name, not from a date on the card.
    public let concernsEveryContact: Bool
    /// Its dates can have a year, so its reminders can count the years (not name days).
    public let hasYears: Bool
    /// The template variable for the years since the date: `age` for birthdays, else `years`.
    public let yearsVariable: String
    /// The boolean that says "this entry is of this kind" in notices and digests:
    /// the kind's name, unless that is a variable already (`date`).
    public let templateFlag: String
    /// The reminder's urgency when a channel does not set one.
    public let urgency: ChannelConfig.Urgency
    /// The `CATEGORIES` of its `export ics` events, and the summary's noun ("Ada's birthday").
    public let calendarCategory: String
    /// Reads the kind's dates of one contact, calling `date(label, date)` for each
    /// (label nil unless `isLabelled`); `prepared` is what `prepare` made of the
    /// files its `fileKeys` name, nil when there is none.
    public let dates: @Sendable (_ contact: PlanningContact, _ prepared: (any Sendable)?,
                                 _ date: (_ label: String?, _ date: Birthday) -> Void) -> Void
    /// Turns the text of the file `fileKeys` names into what `dates` reads;
    /// throws a message naming the line when the file is not of the kind's form.
    public let prepare: (@Sendable (_ text: String) throws(OccasionFileError) -> any Sendable)?

    public init(name: String, spokenName: String? = nil, cardProperties: [String], configTable: String,
                fileKeys: [String] = [], template: String? = nil, messageKind: String? = nil, ledgerName: String? = nil,
                enabledByDefault: Bool = true, defaultOffsets: [Int] = [0], isLabelled: Bool = false,
                allowsFuture: Bool = false, isForTheDeceased: Bool = false, concernsEveryContact: Bool = false,
                hasYears: Bool = true, yearsVariable: String = "years", templateFlag: String? = nil, urgency: ChannelConfig.Urgency = .normal, calendarCategory: String,
                dates: @escaping @Sendable (PlanningContact, (any Sendable)?, (String?, Birthday) -> Void) -> Void,
                prepare: (@Sendable (String) throws(OccasionFileError) -> any Sendable)? = nil) {
        self.name = name
        self.spokenName = spokenName ?? name
        self.cardProperties = cardProperties
        self.configTable = configTable
        self.fileKeys = fileKeys
        self.template = template ?? name
        self.messageKind = messageKind ?? name + ".reminder"
        self.ledgerName = ledgerName ?? name
        self.enabledByDefault = enabledByDefault
        self.defaultOffsets = defaultOffsets
        self.isLabelled = isLabelled
        self.allowsFuture = allowsFuture
        self.isForTheDeceased = isForTheDeceased
        self.concernsEveryContact = concernsEveryContact
        self.hasYears = hasYears
        self.yearsVariable = yearsVariable
        self.templateFlag = templateFlag ?? name
        self.urgency = urgency
        self.calendarCategory = calendarCategory
        self.dates = dates
        self.prepare = prepare
    }

    public static func == (a: OccasionKind, b: OccasionKind) -> Bool { a === b || a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { name }

    /// Every kind, in the order ties are broken in (birthdays first).
    public static let all: [OccasionKind] = [.birthday, .anniversary, .memorial, .labelledDate, .nameday]

    /// The kind named `name` (as ids, the ledger and `set-date` write it).
    public static func named(_ name: String) -> OccasionKind? { byName[name] }

    /// The kind whose reminders have this message kind.
    public static func withMessageKind(_ kind: String) -> OccasionKind? { byMessageKind[kind] }

    /// The kind whose reminders the ledger stores under this name.
    public static func withLedgerName(_ name: String) -> OccasionKind? { byLedgerName[name] }

    /// The kind whose config table is `table`.
    public static func withConfigTable(_ table: String) -> OccasionKind? { all.first { $0.configTable == table } }

    private static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
    private static let byMessageKind = Dictionary(uniqueKeysWithValues: all.map { ($0.messageKind, $0) })
    private static let byLedgerName = Dictionary(uniqueKeysWithValues: all.map { ($0.ledgerName, $0) })

    /// Where `index` is in `all` (planning keeps kinds as this small number).
    var index: Int { Self.all.firstIndex(of: self) ?? 0 }
}

/// A kind's file (`[namedays] file`) that is not of the kind's form.
public struct OccasionFileError: Error, Equatable {
    /// 1-based; 0 for the whole file.
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

/// What one event is about: a kind, and for a labelled date its label.
public struct Occasion: Hashable, Sendable, CustomStringConvertible {
    public var kind: OccasionKind
    /// A labelled date's label ("Graduation"); nil for the other kinds.
    public var label: String?

    public init(_ kind: OccasionKind, label: String? = nil) {
        self.kind = kind
        self.label = kind.isLabelled ? (label ?? "Other") : nil
    }

    public static let birthday = Occasion(.birthday)
    public static let anniversary = Occasion(.anniversary)

    /// The kind's name: `"occasion"` in JSON.
    public var rawValue: String { kind.name }
    public var description: String { kind.name }

    /// How a sentence names it: "birthday", "name day", or a date's label.
    public var spoken: String { label ?? kind.spokenName }

    /// The id part between the contact and the offset: nil for birthdays (their ids
    /// keep three parts), the kind's name, or `date:<label>` with `/` and `%` of the
    /// label percent-encoded.
    public var idSegment: String? {
        if kind == .birthday { return nil }
        guard let label else { return kind.name }
        return kind.name + ":" + PlannedEvent.encodeContactID(label)
    }

    /// Reads an id's second part back (`anniversary`, `date:Graduation`); nil for
    /// anything that is not a kind's.
    public init?(idSegment: Substring) {
        if let colon = idSegment.firstIndex(of: ":") {
            guard let kind = OccasionKind.named(String(idSegment[..<colon])), kind.isLabelled else { return nil }
            let label = String(idSegment[idSegment.index(after: colon)...])
            self.init(kind, label: label.replacingOccurrences(of: "%2F", with: "/").replacingOccurrences(of: "%25", with: "%"))
        } else {
            guard let kind = OccasionKind.named(String(idSegment)), kind != .birthday, !kind.isLabelled else { return nil }
            self.init(kind)
        }
    }
}

extension OccasionKind {
    /// Birthdays: `BDAY` (and the other calendars' `X-ALTBDAY`), `[reminders]`,
    /// `reminder.mustache`; ids keep their three-part form.
    public static let birthday = OccasionKind(
        name: "birthday", cardProperties: ["BDAY", "X-ALTBDAY"], configTable: "reminders", template: "reminder",
        messageKind: "birthday.reminder", ledgerName: "reminder", yearsVariable: "age", calendarCategory: "Birthday",
        dates: { contact, _, date in if let birthday = contact.birthday { date(nil, birthday) } })

    /// Wedding and other anniversaries: `[anniversaries]`, `anniversary.mustache`.
    public static let anniversary = OccasionKind(
        name: "anniversary", cardProperties: ["ANNIVERSARY", "X-ANNIVERSARY", "X-EVOLUTION-ANNIVERSARY", "X-MS-ANNIVERSARY",
                                              "X-KADDRESSBOOK-X-ANNIVERSARY", "X-ABDATE"],
        configTable: "anniversaries", calendarCategory: "Anniversary",
        dates: { contact, _, date in if let anniversary = contact.anniversary { date(nil, anniversary) } })

    /// The day a contact died: `DEATHDATE` (RFC 6474) or `X-DEATHDATE`, or by
    /// hand. Only deceased contacts have one planned, and only when
    /// `[memorials] enabled = true`: a quiet reminder.
    public static let memorial = OccasionKind(
        name: "memorial", cardProperties: ["DEATHDATE", "X-DEATHDATE"], configTable: "memorials", enabledByDefault: false,
        isForTheDeceased: true, urgency: .low, calendarCategory: "Memorial",
        dates: { contact, _, date in
            for kept in contact.otherDates where kept.kind.name == "memorial" { date(nil, kept.date) }
        })

    /// A labelled yearly date: Apple's `itemN.X-ABDATE` with its `X-ABLabel`
    /// (any but the anniversary one), Google Contacts' `Event N` columns, or by
    /// hand; `[dates]`, `date.mustache` with `label`.
    public static let labelledDate = OccasionKind(
        name: "date", cardProperties: ["X-ABDATE"], configTable: "dates", isLabelled: true, allowsFuture: true,
        templateFlag: "labelled", calendarCategory: "Date",
        dates: { contact, _, date in
            for kept in contact.otherDates where kept.kind.name == "date" { date(kept.label, kept.date) }
        })
}

/// A date of a kind other than birthday and anniversary, as a contact keeps it.
public struct OccasionDate: Hashable, Sendable {
    public var kind: OccasionKind
    /// For a labelled date; nil otherwise.
    public var label: String?
    public var date: Birthday

    public init(kind: OccasionKind, label: String? = nil, date: Birthday) {
        self.kind = kind
        self.label = kind.isLabelled ? (label ?? "Other") : nil
        self.date = date
    }

    public var occasion: Occasion { Occasion(kind, label: label) }
}
