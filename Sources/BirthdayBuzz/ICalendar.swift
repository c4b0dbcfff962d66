import Foundation

/// The birthdays (and anniversaries) of included contacts as an iCalendar file
/// (RFC 5545; docs/design/asks-and-wishes.md): one all-day VEVENT per occasion that recurs
/// yearly, or single events for the next ten years when the date follows
/// another calendar (an RRULE cannot).
public enum ICalendarExport {
    /// How many years of single events a non-Gregorian date gets.
    public static let singleEventYears = 10

    /// The calendar file, lines ending in CRLF and folded at 75 octets.
    ///
    /// - Parameters:
    ///   - contacts: the contacts to write; callers pass the included ones.
    ///   - today: the local date single events start from, and the DTSTART year of
    ///     a recurring date without a year.
    ///   - stamp: DTSTAMP, UTC seconds since 1970.
    ///   - kinds: the occasion kinds reminded of (birthdays always), each written
    ///     for the contacts it is planned for (memorials for the deceased only);
    ///     `prepared` as `Planner.prepared`.
    public static func calendar(_ contacts: [Contact], kinds: [OccasionKind] = [.birthday],
                                prepared: [String: any Sendable] = [:], today: LocalDate,
                                feb29: Feb29Policy, stamp: Int64) -> String {
        var lines = [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//BirthdayBuzz//buzz//EN",
            "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH",
            "X-WR-CALNAME:Birthdays",
        ]
        let dtstamp = utcStamp(stamp)
        let ordered = contacts.sorted { ($0.id) < ($1.id) }
        for contact in ordered {
            let planning = contact.planning
            for kind in kinds where kind.isForTheDeceased == contact.isDeceased {
                kind.dates(planning, prepared[kind.name]) { label, date in
                    lines += events(contact: contact, date: date, occasion: Occasion(kind, label: label), today: today,
                                    feb29: feb29, dtstamp: dtstamp)
                }
            }
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// A stable UID for a contact's occasion: a digest of the contact id, so the
    /// same contact keeps its event across exports and machines.
    public static func uid(contactID: String, occasion: Occasion) -> String {
        let digest = SHA256.hash(Array(contactID.utf8)).prefix(16)
        let hex = digest.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return "\(hex)-\(occasion.idSegment ?? occasion.rawValue)@birthdaybuzz"
    }

    private static func events(contact: Contact, date: Birthday, occasion: Occasion, today: LocalDate,
                               feb29: Feb29Policy, dtstamp: String) -> [String] {
        let uid = uid(contactID: contact.id, occasion: occasion)
        let summary = "\(contact.name)'s \(occasion.spoken)"
        var description: String?
        if let year = date.year {
            description = occasion == .birthday ? "Born \(pad(year, 4))" : "Since \(pad(year, 4))"
        }
        func event(uid: String, start: LocalDate, rule: String?, summary: String) -> [String] {
            var lines = [
                "BEGIN:VEVENT",
                "UID:" + uid,
                "DTSTAMP:" + dtstamp,
                "DTSTART;VALUE=DATE:" + compact(start),
                "DTEND;VALUE=DATE:" + compact(start.adding(days: 1)),
            ]
            if let rule { lines.append("RRULE:" + rule) }
            lines.append("SUMMARY:" + escaped(summary))
            if let description { lines.append("DESCRIPTION:" + escaped(description)) }
            lines.append("CATEGORIES:" + occasion.kind.calendarCategory)
            lines.append("TRANSP:TRANSPARENT")
            lines.append("END:VEVENT")
            return lines
        }

        if date.calendar != .gregorian {
            // Single events: the next occurrences in the coming ten years.
            var lines: [String] = []
            var from = today
            let end = LocalDate(year: today.year + singleEventYears, month: today.month, day: 1)
                ?? today.adding(days: 3_653)
            while true {
                let next = date.nextOccurrence(onOrAfter: from, feb29: feb29)
                guard next.date < end else { break }
                let dated = uid.replacingOccurrences(of: "@", with: "-" + compact(next.date) + "@")
                var title = summary
                if let age = next.age, occasion == .birthday { title += " (\(age))" }
                lines += event(uid: dated, start: next.date, rule: nil, summary: title)
                from = next.date.adding(days: 1)
            }
            return lines
        }

        if date.month == 2, date.day == 29 {
            // Feb 29 in leap years; in common years Feb 28 (the month's last day,
            // as Nextcloud writes it) or Mar 1 (the 60th day of the year).
            let rule = feb29 == .feb28 ? "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1" : "FREQ=YEARLY;BYYEARDAY=60"
            let start = date.dateOfBirth ?? date.resolved(in: today.year, policy: feb29)
            return event(uid: uid, start: start, rule: rule, summary: summary)
        }
        let start = date.dateOfBirth ?? date.resolved(in: today.year, policy: feb29)
        return event(uid: uid, start: start, rule: "FREQ=YEARLY", summary: summary)
    }

    /// `20270315`.
    private static func compact(_ date: LocalDate) -> String {
        pad(date.year, 4) + pad(date.month, 2) + pad(date.day, 2)
    }

    /// `20270315T090000Z`.
    private static func utcStamp(_ seconds: Int64) -> String {
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let rest = Int(seconds - Int64(days) * 86_400)
        return compact(LocalDate(daysSinceEpoch: days)) + "T" + pad(rest / 3_600, 2) + pad(rest / 60 % 60, 2)
            + pad(rest % 60, 2) + "Z"
    }

    /// TEXT escaping (RFC 5545 §3.3.11): backslash, semicolon, comma, newline.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n", "\r\n": out += "\\n"
            case "\r": continue
            default: out.append(character)
            }
        }
        return out
    }

    /// Folds a content line at 75 octets without splitting a UTF-8 sequence
    /// (RFC 5545 §3.1): continuation lines begin with a space.
    static func fold(_ line: String) -> String {
        let bytes = Array(line.utf8)
        guard bytes.count > 75 else { return line }
        var pieces: [String] = []
        var start = 0
        var limit = 75
        while start < bytes.count {
            var end = min(start + limit, bytes.count)
            // Back off to a character boundary (not a UTF-8 continuation byte).
            while end < bytes.count, end > start, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            pieces.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end
            limit = 74
        }
        return pieces.joined(separator: "\r\n ")
    }
}
