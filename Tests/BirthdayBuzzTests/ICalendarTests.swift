import Foundation
import Testing
@testable import BirthdayBuzz

/// The iCalendar writer (docs/design/asks-and-wishes.md): rules, UIDs, escaping and folding.
@Suite struct ICalendarTests {
    private func contact(_ id: String, _ name: String, _ bday: String, calendar: BirthdayCalendar = .gregorian) -> Contact {
        var card = ContactCard(id: id, name: name)
        card.birthday = Birthday(storedForm: bday, calendar: calendar)
        return Contact(card: card, decision: .include)
    }

    private func vevents(_ text: String) -> [[String]] {
        var events: [[String]] = []
        var current: [String]?
        for line in text.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n") {
            if line == "BEGIN:VEVENT" { current = [] } else if line == "END:VEVENT" {
                events.append(current ?? [])
                current = nil
            } else { current?.append(line) }
        }
        return events
    }

    @Test func yearlyRulesAndFeb29() throws {
        let contacts = [contact("a", "Ana, Lima; Jr", "1990-03-15"), contact("b", "Bo", "--07-04"),
                        contact("c", "Cy", "1996-02-29"), contact("d", "Di", "--02-29")]
        let today = LocalDate(year: 2027, month: 1, day: 10)!
        let feb28 = ICalendarExport.calendar(contacts, kinds: [.birthday, .anniversary], today: today, feb29: .feb28, stamp: 0)
        #expect(feb28.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"))
        #expect(feb28.hasSuffix("END:VCALENDAR\r\n"))
        let events = vevents(feb28)
        #expect(events.count == 4)
        #expect(events[0].contains("DTSTART;VALUE=DATE:19900315"))
        #expect(events[0].contains("RRULE:FREQ=YEARLY"))
        #expect(events[0].contains("SUMMARY:Ana\\, Lima\\; Jr's birthday"))
        #expect(events[0].contains("DESCRIPTION:Born 1990"))
        #expect(events[1].contains("DTSTART;VALUE=DATE:20270704"))
        #expect(!events[1].contains { $0.hasPrefix("DESCRIPTION") })
        #expect(events[2].contains("RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1"))
        #expect(events[2].contains("DTSTART;VALUE=DATE:19960229"))
        #expect(events[3].contains("DTSTART;VALUE=DATE:20270228"))
        let mar1 = vevents(ICalendarExport.calendar(contacts, kinds: [.birthday, .anniversary], today: today, feb29: .mar1, stamp: 0))
        #expect(mar1[2].contains("RRULE:FREQ=YEARLY;BYYEARDAY=60"))
        #expect(mar1[3].contains("DTSTART;VALUE=DATE:20270301"))
        // Stable: the same contact id gives the same UID.
        #expect(events[0].contains("UID:" + ICalendarExport.uid(contactID: "a", occasion: .birthday)))
        #expect(ICalendarExport.uid(contactID: "a", occasion: .birthday) != ICalendarExport.uid(contactID: "b", occasion: .birthday))
    }

    @Test func otherCalendarsAreSingleEventsForTenYears() throws {
        let today = LocalDate(year: 2027, month: 1, day: 10)!
        let text = ICalendarExport.calendar([contact("h", "Hava", "1990-03-15", calendar: .hebrew)], kinds: [.birthday],
                                            today: today, feb29: .feb28, stamp: 0)
        let events = vevents(text)
        #expect(events.count == 10)
        #expect(!text.contains("RRULE"))
        #expect(Set(events.compactMap { $0.first { $0.hasPrefix("UID:") } }).count == 10)
    }

    @Test func longLinesFoldAtCharacterBoundaries() {
        let line = "SUMMARY:" + String(repeating: "é", count: 60)
        let folded = ICalendarExport.fold(line)
        for piece in folded.components(separatedBy: "\r\n") { #expect(piece.utf8.count <= 75) }
        #expect(folded.replacingOccurrences(of: "\r\n ", with: "") == line)
    }
}
