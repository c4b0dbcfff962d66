/// The sections of the buzz list (DESIGN §2).
public enum ListSection: String, Sendable, CaseIterable {
    case today
    case thisWeek = "this_week"
    case thisMonth = "this_month"
    case later
    case missing

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
        }
    }
}

/// One row of the buzz list: a contact and its next birthday.
public struct ListEntry: Sendable {
    public var contact: Contact
    public var next: Occurrence?
    public var daysUntil: Int?
    public var section: ListSection

    /// Rows for `contacts`, as of the local date `today`, nearest first, then by
    /// name; contacts without a birthday last (section `missing`).
    public static func entries(_ contacts: [Contact], today: LocalDate, feb29: Feb29Policy) -> [ListEntry] {
        let rows = contacts.map { contact -> ListEntry in
            guard let birthday = contact.birthday else {
                return ListEntry(contact: contact, next: nil, daysUntil: nil, section: .missing)
            }
            let next = birthday.nextOccurrence(onOrAfter: today, feb29: feb29)
            let days = today.days(until: next.date)
            return ListEntry(contact: contact, next: next, daysUntil: days, section: ListSection(daysUntil: days))
        }
        return rows.sorted { a, b in
            switch (a.daysUntil, b.daysUntil) {
            case let (x?, y?) where x != y: return x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default:
                return a.contact.name.lowercased() != b.contact.name.lowercased()
                    ? a.contact.name.lowercased() < b.contact.name.lowercased() : a.contact.id < b.contact.id
            }
        }
    }
}
