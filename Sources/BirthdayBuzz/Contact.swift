/// A phone number from a contact card.
public struct Phone: Hashable, Sendable {
    public enum Kind: String, Sendable { case cell, home, work, other }
    public var number: String
    public var kind: Kind
    public var preferred: Bool

    public init(number: String, kind: Kind = .other, preferred: Bool = false) {
        self.number = number
        self.kind = kind
        self.preferred = preferred
    }
}

/// An email address from a contact card.
public struct Email: Hashable, Sendable {
    public var address: String
    public var preferred: Bool

    public init(address: String, preferred: Bool = false) {
        self.address = address
        self.preferred = preferred
    }
}

/// What a contact card says, as imported: everything BirthdayBuzz keeps from it.
public struct ContactCard: Hashable, Sendable {
    /// The card's UID, or the derived `h-…` id when it has none (docs/design/identity.md).
    public var id: String
    /// Whether `id` came from the card's UID (false: derived from name and address).
    public var hasUID: Bool
    /// FN, else N, else "Unknown Contact <id suffix>"; never holds control characters.
    public var name: String
    /// Given name from N, else the first word of the display name.
    public var firstName: String
    public var birthday: Birthday?
    /// A BDAY given as text (`VALUE=text`), kept as a note.
    public var birthdayText: String?
    public var anniversary: Birthday?
    /// The date of death from `DEATHDATE` (vCard 4, RFC 6474) or `X-DEATHDATE`, when it is a date.
    public var deathDate: Birthday?
    /// The date of death when the card gives it as text (`VALUE=text`, or a value
    /// that is not a date such as "circa 1890"): the contact is deceased all the same.
    public var deathText: String?
    /// Labelled yearly dates (Apple's `itemN.X-ABDATE` with a label other than the
    /// anniversary one; Google Contacts' events of other types), in card order,
    /// labels made unique (" 2", " 3").
    public var labelledDates: [LabelledDate] = []
    public var phones: [Phone]
    public var emails: [Email]
    public var categories: [String]
    /// BCP 47 language tag from LANG, if any.
    public var language: String?
    /// The card's `TZ`, when it names a zone (an IANA name or a UTC offset).
    public var timeZone: ContactTimeZone?
    /// A `TZ` value that names no known zone: not kept, only reported at debug level.
    public var unreadTimeZone: String?
    /// A group card (`KIND:group`, `X-ADDRESSBOOKSERVER-KIND:group`): a list of
    /// people, not a person. Import leaves it out of the store.
    public var isGroup: Bool

    public init(id: String, hasUID: Bool = true, name: String, firstName: String? = nil,
                birthday: Birthday? = nil, birthdayText: String? = nil, anniversary: Birthday? = nil,
                phones: [Phone] = [], emails: [Email] = [], categories: [String] = [], language: String? = nil,
                isGroup: Bool = false) {
        self.id = id
        self.hasUID = hasUID
        self.name = name
        self.firstName = firstName ?? Self.firstName(of: name)
        self.birthday = birthday
        self.birthdayText = birthdayText
        self.anniversary = anniversary
        self.deathDate = nil
        self.deathText = nil
        self.timeZone = nil
        self.unreadTimeZone = nil
        self.phones = phones
        self.emails = emails
        self.categories = categories
        self.language = language
        self.isGroup = isGroup
    }

    /// Whether the card says the person has died (a date of death, or one given as text).
    public var hasDeathDate: Bool { deathDate != nil || deathText != nil }

    /// The dates of kinds other than birthday and anniversary the card gives.
    public var otherDates: [OccasionDate] {
        var dates: [OccasionDate] = []
        if let deathDate { dates.append(OccasionDate(kind: .memorial, date: deathDate)) }
        for dated in labelledDates { dates.append(OccasionDate(kind: .labelledDate, label: dated.label, date: dated.date)) }
        return dates
    }

    /// A first name when the card gives none: the name's first word.
    static func firstName(of name: String) -> String {
        name.split(separator: " ").first.map(String.init) ?? name
    }
}

/// Whether the user wants reminders for a contact.
public enum Decision: Int, Sendable {
    case skip = 0
    case include = 1
}

/// A contact as the store holds it: the card plus the user's own decisions.
public struct Contact: Hashable, Sendable {
    public var card: ContactCard
    /// nil = undecided.
    public var decision: Decision?
    /// A birthday entered by hand; wins over the card's.
    public var manualBirthday: Birthday?
    /// `clear-birthday` on the card's birthday: "no birthday" (the card's date is
    /// wrong), kept across re-imports until a birthday is entered by hand.
    public var birthdayCleared: Bool
    /// An anniversary entered by hand (`set-anniversary`); wins over the card's.
    public var manualAnniversary: Birthday?
    /// `clear-anniversary` on the card's anniversary: none, kept across re-imports.
    public var anniversaryCleared = false
    /// `buzz set --deceased` (true) or `--no-deceased` (false); nil when not marked
    /// by hand. Wins over the card's date of death; kept across re-imports.
    public var deceasedMark: Bool?
    /// The contact's own reminder settings (`buzz set`); nil when none.
    public var settings: ContactSettings?
    /// Dates of the other kinds entered (or cleared) by hand (`set-date`,
    /// `clear-date`): each wins over the card's date of the same kind and label.
    public var handDates: [HandDate] = []
    /// Where the card came from (file or directory path).
    public var source: String
    /// When the contact was last included, as seconds since 1970 (nil if never).
    public var includedAt: Int64?
    /// Ask history (docs/design/asks-and-wishes.md).
    public var lastRequestDate: String?
    public var requestChannel: String?

    public init(card: ContactCard, decision: Decision? = nil, manualBirthday: Birthday? = nil,
                source: String = "", includedAt: Int64? = nil,
                lastRequestDate: String? = nil, requestChannel: String? = nil, birthdayCleared: Bool = false) {
        self.card = card
        self.decision = decision
        self.manualBirthday = manualBirthday
        self.birthdayCleared = birthdayCleared
        self.source = source
        self.includedAt = includedAt
        self.lastRequestDate = lastRequestDate
        self.requestChannel = requestChannel
    }

    public var id: String { card.id }
    public var name: String { card.name }
    /// The birthday that counts: the hand-entered one, else none when cleared by
    /// hand, else the card's.
    public var birthday: Birthday? { manualBirthday ?? (birthdayCleared ? nil : card.birthday) }
    public var isIncluded: Bool { decision == .include }
    /// The anniversary that counts: the hand-entered one, else none when cleared
    /// by hand, else the card's.
    public var anniversary: Birthday? { manualAnniversary ?? (anniversaryCleared ? nil : card.anniversary) }
    /// Deceased: marked so by hand, else the card has a date of death (a hand
    /// `--no-deceased` wins over the card). A deceased contact gets no reminders,
    /// asks or wishes, and is never "missing a birthday".
    public var isDeceased: Bool {
        if let deceasedMark { return deceasedMark }
        // A memorial date kept by hand is a date of death; one cleared by hand takes the card's away.
        if let memorial = handDates.first(where: { $0.kind == .memorial }) { return memorial.date != nil }
        return card.hasDeathDate
    }

    /// The dates of the kinds other than birthday and anniversary that count:
    /// the hand-entered ones, else the card's unless cleared by hand.
    public var otherDates: [OccasionDate] {
        HandDate.resolve(card: card.otherDates, hand: handDates)
    }
}

/// A labelled date as a card gives it.
public struct LabelledDate: Hashable, Sendable {
    public var label: String
    public var date: Birthday

    public init(label: String, date: Birthday) {
        self.label = label
        self.date = date
    }

    /// Labels as they are kept: blank is "Other", and a label already taken gets
    /// " 2" (then " 3", …).
    public static func uniqueLabel(_ label: String, among taken: [String]) -> String {
        let trimmed = label.trimmingWhitespace()
        let base = trimmed.isEmpty ? "Other" : trimmed
        guard taken.contains(base) else { return base }
        var number = 2
        while taken.contains("\(base) \(number)") { number += 1 }
        return "\(base) \(number)"
    }
}

/// A date of another kind kept by hand: entered (`set-date`), or cleared
/// (`clear-date`, `date` nil: the card's is wrong). Survives re-import.
public struct HandDate: Hashable, Sendable {
    public var kind: OccasionKind
    /// A labelled date's label; nil for the other kinds.
    public var label: String?
    /// nil: cleared.
    public var date: Birthday?

    public init(kind: OccasionKind, label: String? = nil, date: Birthday?) {
        self.kind = kind
        self.label = kind.isLabelled ? label : nil
        self.date = date
    }

    /// The card's dates with the hand entries applied: a hand entry replaces the
    /// card's date of its kind and label (or removes it, when cleared), and adds
    /// one the card does not have.
    public static func resolve(card: [OccasionDate], hand: [HandDate]) -> [OccasionDate] {
        guard !hand.isEmpty else { return card }
        func matches(_ entry: HandDate, _ date: OccasionDate) -> Bool { entry.kind == date.kind && entry.label == date.label }
        var result: [OccasionDate] = []
        for date in card {
            if let entry = hand.first(where: { matches($0, date) }) {
                if let kept = entry.date { result.append(OccasionDate(kind: date.kind, label: date.label, date: kept)) }
            } else {
                result.append(date)
            }
        }
        for entry in hand where !card.contains(where: { matches(entry, $0) }) {
            if let kept = entry.date { result.append(OccasionDate(kind: entry.kind, label: entry.label, date: kept)) }
        }
        return result
    }
}
