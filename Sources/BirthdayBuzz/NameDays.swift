import Foundation

extension OccasionKind {
    /// Name days: the day of a contact's given name in a calendar of name days
    /// that `[namedays] file` names (off without one). The file holds lines
    /// `MM-DD Name, Name` or, as BSD calendar(1) writes them,
    /// `MM/DD<TAB>Name, Name`; every other line (comments, `#` directives,
    /// `LANG=`) is skipped, so Debian's
    /// `/usr/share/calendar/hu_HU/calendar.nevnapok` works as it is. A contact's
    /// given name (N, else the first word of FN) is looked up without case or
    /// accents; a name on several days takes the first in the year.
    public static let nameday = OccasionKind(
        name: "nameday", spokenName: "name day", cardProperties: ["N", "FN"], configTable: "namedays",
        fileKeys: ["file"], concernsEveryContact: true, hasYears: false, calendarCategory: "Name day",
        dates: { contact, prepared, date in
            guard let calendar = prepared as? NameDayCalendar, let day = calendar.day(of: contact.firstName) else { return }
            date(nil, day)
        },
        prepare: { text throws(OccasionFileError) in try NameDayCalendar(text) })
}

/// A calendar of name days: folded given name → the first day it is on.
struct NameDayCalendar: Sendable {
    private var days: [String: Birthday] = [:]

    init(_ text: String) throws(OccasionFileError) {
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            guard let (month, day, names) = Self.entry(line) else { continue }
            guard let date = Birthday(month: month, day: day, year: nil) else {
                throw OccasionFileError(line: number, message: "\(month)/\(day) is not a day of the year")
            }
            for name in names.split(separator: ",") {
                let key = Self.fold(name.trimmingCharacters(in: .whitespaces))
                guard !key.isEmpty else { continue }
                if let known = days[key], (known.month, known.day) <= (month, day) { continue }
                days[key] = date
            }
        }
        guard !days.isEmpty else {
            throw OccasionFileError(line: 0, message: "no name days in it (lines like `01-02 Abel, Gregory`)")
        }
    }

    /// `MM-DD Names` or `MM/DD<TAB>Names`; nil for any other line.
    private static func entry(_ line: Substring) -> (Int, Int, Substring)? {
        let bytes = Array(line.utf8.prefix(6))
        guard bytes.count == 6, bytes[2] == UInt8(ascii: "-") || bytes[2] == UInt8(ascii: "/"),
              bytes[5] == UInt8(ascii: " ") || bytes[5] == UInt8(ascii: "\t"),
              [0, 1, 3, 4].allSatisfy({ (0x30...0x39).contains(bytes[$0]) }) else { return nil }
        let month = Int(bytes[0] - 0x30) * 10 + Int(bytes[1] - 0x30)
        let day = Int(bytes[3] - 0x30) * 10 + Int(bytes[4] - 0x30)
        return (month, day, line.dropFirst(6))
    }

    /// Without case or accents: "Ábel" and "abel" are one name.
    private static func fold(_ name: some StringProtocol) -> String {
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return name.lowercased() }
        return name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
    }

    /// The day of a given name: the whole name, else its first word ("Anna Maria").
    func day(of givenName: String) -> Birthday? {
        let name = givenName.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        if let day = days[Self.fold(name)] { return day }
        guard let first = name.split(separator: " ").first, first.count < name.count else { return nil }
        return days[Self.fold(first)]
    }
}
