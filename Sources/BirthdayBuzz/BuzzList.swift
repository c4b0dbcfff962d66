/// The sections of the buzz list (docs/design/reminders.md).
public enum ListSection: String, Sendable, CaseIterable {
    case today
    case thisWeek = "this_week"
    case thisMonth = "this_month"
    case later
    case missing
    /// Contacts who have died (`list --all` only): no dates to count down to.
    case inMemory = "in_memory"

    /// The section for a number of days until a birthday.
    public init(daysUntil: Int) {
        switch daysUntil {
        case ...0: self = .today
        case 1...7: self = .thisWeek
        case 8...30: self = .thisMonth
        default: self = .later
        }
    }

    public var title: String {
        switch self {
        case .today: return "Today"
        case .thisWeek: return "This week"
        case .thisMonth: return "This month"
        case .later: return "Later"
        case .missing: return "Missing a birthday"
        case .inMemory: return "In memory"
        }
    }
}

/// One row of the buzz list: a contact and the next date of one of its occasions.
public struct ListEntry: Sendable {
    public var contact: Contact
    /// What the row is about: the birthday (a contact without one has a
    /// `missing` birthday row), or another occasion (only when there is one).
    public var occasion: Occasion = .birthday
    /// The date the row is about; nil for a missing birthday.
    public var date: Birthday?
    public var next: Occurrence?
    public var daysUntil: Int?
    public var section: ListSection

    public init(contact: Contact, occasion: Occasion = .birthday, date: Birthday? = nil, next: Occurrence?, daysUntil: Int?,
                section: ListSection) {
        self.contact = contact
        self.occasion = occasion
        self.date = date ?? (occasion == .birthday ? contact.birthday : occasion == .anniversary ? contact.anniversary : nil)
        self.next = next
        self.daysUntil = daysUntil
        self.section = section
    }

    /// Rows for `contacts`, as of the local date `today`, nearest first, then by
    /// name (a birthday before the other kinds, in `OccasionKind.all`'s order);
    /// contacts without a birthday last (section `missing`). Each of `kinds` (the
    /// kinds other than birthdays to list, with `prepared` as `Planner.prepared`)
    /// adds a row per date the contact has of it (one line per occasion). A
    /// deceased contact has no dates to count down to: with `inMemory` it has one
    /// row in the last section, `inMemory`; without, none.
    public static func entries(_ contacts: [Contact], today: LocalDate, feb29: Feb29Policy,
                               kinds: [OccasionKind] = [], prepared: [String: any Sendable] = [:],
                               inMemory: Bool = false) -> [ListEntry] {
        let kinds = kinds.filter { $0 != .birthday && !$0.isForTheDeceased }
        var rows: [ListEntry] = []
        var departed: [ListEntry] = []
        rows.reserveCapacity(contacts.count)
        for contact in contacts {
            if contact.isDeceased {
                if inMemory { departed.append(ListEntry(contact: contact, next: nil, daysUntil: nil, section: .inMemory)) }
                continue
            }
            if let birthday = contact.birthday {
                let next = birthday.nextOccurrence(onOrAfter: today, feb29: feb29)
                let days = today.days(until: next.date)
                rows.append(ListEntry(contact: contact, next: next, daysUntil: days, section: ListSection(daysUntil: days)))
            } else {
                rows.append(ListEntry(contact: contact, next: nil, daysUntil: nil, section: .missing))
            }
            guard !kinds.isEmpty else { continue }
            let planning = contact.planning
            for kind in kinds {
                kind.dates(planning, prepared[kind.name]) { label, date in
                    let next = date.nextOccurrence(onOrAfter: today, feb29: feb29, countingTheDate: kind.allowsFuture)
                    let days = today.days(until: next.date)
                    rows.append(ListEntry(contact: contact, occasion: Occasion(kind, label: label), date: date, next: next,
                                          daysUntil: days, section: ListSection(daysUntil: days)))
                }
            }
        }
        departed.sort { ($0.contact.name.lowercased(), $0.contact.id) < ($1.contact.name.lowercased(), $1.contact.id) }
        rows.sort { a, b in
            switch (a.daysUntil, b.daysUntil) {
            case let (x?, y?) where x != y: return x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default:
                if a.contact.name.lowercased() != b.contact.name.lowercased() {
                    return a.contact.name.lowercased() < b.contact.name.lowercased()
                }
                if a.contact.id != b.contact.id { return a.contact.id < b.contact.id }
                let (ka, kb) = (a.occasion.kind.index, b.occasion.kind.index)
                return ka != kb ? ka < kb : (a.occasion.label ?? "") < (b.occasion.label ?? "")
            }
        }
        return rows + departed
    }
}
