import BuzzTestKit
import Foundation
import Testing
@testable import BirthdayBuzz
import BuzzFiles

/// Anniversaries as a second occasion, per-contact settings, gift ideas in
/// reminders (docs/design/occasions.md).
@Suite struct OccasionsTests {
    static func config(_ toml: String = "", zone: String = "UTC") throws -> BuzzConfig {
        try BuzzConfig(toml: toml, file: "t.toml", environment: [:], systemTimeZone: TimeZone(identifier: zone)!, types: .shipped)
    }

    static func at(_ text: String, _ config: BuzzConfig) -> Int64 {
        PinnedNow(text)!.instant(in: WallClock(timeZone: config.general.timeZone))
    }

    /// Acceptance: Apple's X-ABDATE labelled `_$!<Anniversary>!$_`, 2015-06-20, gives
    /// `<id>/anniversary/0/2027-06-20` at the configured time, rendered "12 years".
    @Test func appleAnniversaryIsPlannedAtTheConfiguredTimeAndRenderedWithItsYears() throws {
        let text = ["BEGIN:VCARD", "VERSION:3.0", "UID:ada/x", "FN:Ada Lovelace", "N:Lovelace;Ada;;;",
                    "item1.X-ABDATE:2015-06-20", "item1.X-ABLabel:_$!<Anniversary>!$_", "END:VCARD", ""]
            .joined(separator: "\r\n")
        let card = try #require(cards(text).first)
        #expect(card.birthday == nil)
        let config = try Self.config("[general]\ntimezone = \"Europe/Berlin\"\n[reminders]\ntime = \"07:45\"\noffsets = [0, 1]\n")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let contact = Contact(card: card, decision: .include).planning
        let events = planner.upcoming([contact], now: Self.at("2027-06-01T00:00", config), limit: 10)
        // [anniversaries] offsets default to [0], whatever [reminders] says.
        #expect(events.map(\.id) == ["ada%2Fx/anniversary/0/2027-06-20"])
        let event = try #require(events.first)
        #expect(event.occasion == .anniversary)
        #expect(planner.clock.iso8601(event.fireAt) == "2027-06-20T07:45:00+02:00")
        #expect(event.age == 12)
        let templates = try MessageTemplates(overrideDirectory: nil)
        let message = templates.renderReminder(name: contact.name, firstName: contact.firstName, daysUntil: 0, age: event.age,
                                               date: event.occurrence, locale: "en", occasion: .anniversary)
        #expect(message.title.contains("anniversary"), "\(message)")
        #expect(message.body.contains("12 years"), "\(message)")
        for locale in ["de", "fr", "es"] {
            let localized = templates.renderReminder(name: "Ada", firstName: "Ada", daysUntil: 3, age: 12,
                                                     date: event.occurrence, locale: locale, occasion: .anniversary)
            #expect(localized.locale == locale)
            #expect(localized.body.contains("12"), "\(locale): \(localized)")
        }
    }

    @Test func eventIDsParseForBothOccasions() throws {
        let date = try #require(LocalDate(iso: "2027-06-20"))
        let birthday = PlannedEvent.id(contactID: "a/b%c", offset: 1, occurrence: date)
        let anniversary = PlannedEvent.id(contactID: "a/b%c", occasion: .anniversary, offset: 7, occurrence: date)
        #expect(birthday == "a%2Fb%25c/1/2027-06-20")
        #expect(anniversary == "a%2Fb%25c/anniversary/7/2027-06-20")
        let one = try #require(PlannedEvent.parse(birthday))
        #expect(one.contactID == "a/b%c" && one.occasion == .birthday && one.offset == 1 && one.occurrence == date)
        let two = try #require(PlannedEvent.parse(anniversary))
        #expect(two.contactID == "a/b%c" && two.occasion == .anniversary && two.offset == 7 && two.occurrence == date)
        #expect(PlannedEvent.parse("a/ask/1") == nil)
        #expect(PlannedEvent.parse("a/wish/2027-06-20") == nil)
        #expect(PlannedEvent.parse("a/other/1/2027-06-20") == nil)
    }

    /// A birthday and an anniversary on the same day are two events; the ledger
    /// holding one does not hide the other.
    @Test func recordedDeliveriesTellTheOccasionsApart() throws {
        let config = try Self.config("[reminders]\noffsets = [0]\n")
        let planner = Planner(config: config, defaultChannels: ["console"])
        let contact = PlanningContact(id: "p", name: "P", birthday: Birthday(month: 6, day: 20, year: 1980),
                                      anniversary: Birthday(month: 6, day: 20, year: 2015))
        let now = Self.at("2027-06-01T00:00Z", config)
        #expect(planner.upcoming([contact], now: now, limit: 10).map(\.id) == ["p/0/2027-06-20", "p/anniversary/0/2027-06-20"])
        let recorded = RecordedDeliveries(keys: [LedgerKey(eventID: "p/anniversary/0/2027-06-20", channel: "console")])
        #expect(planner.upcoming([contact], now: now, limit: 10, recorded: recorded).map(\.id)
                == ["p/0/2027-06-20", "p/anniversary/0/2028-06-20"])
        let other = RecordedDeliveries(keys: [LedgerKey(eventID: "p/0/2027-06-20", channel: "console")])
        #expect(planner.upcoming([contact], now: now, limit: 10, recorded: other).map(\.id)
                == ["p/anniversary/0/2027-06-20", "p/0/2028-06-20"])
    }

    @Test func anniversariesFollowTheirOwnTableAndCanBeTurnedOff() throws {
        let contact = PlanningContact(id: "p", name: "P", birthday: nil, categories: ["family"],
                                      anniversary: Birthday(month: 2, day: 29, year: 2008))
        let on = try Self.config("""
            [anniversaries]
            offsets = [0, 3]
            channels = ["desktop"]
            [reminders]
            feb29 = "mar1"
            [groups.family]
            offsets = [1]
            channels = ["console"]
            """)
        let planner = Planner(config: on, defaultChannels: ["console"])
        let events = planner.upcoming([contact], now: Self.at("2027-01-01T00:00Z", on), limit: 10)
        // Feb 29 in a common year follows reminders.feb29, as birthdays do.
        #expect(events.map(\.id) == ["p/anniversary/3/2027-03-01", "p/anniversary/0/2027-03-01"])
        #expect(events.allSatisfy { $0.channels == ["desktop"] })
        #expect(events.first?.age == 19)
        let off = try Self.config("[anniversaries]\nenabled = false\n")
        #expect(Planner(config: off, defaultChannels: ["console"]).upcoming([contact], now: 0, limit: 10).isEmpty)
        #expect(throws: ConfigError.self) { try Self.config("[anniversaries]\nchannels = [\"nowhere\"]\n") }
        #expect(throws: ConfigError.self) { try Self.config("[anniversaries]\noffset = [1]\n") }
    }

    /// An anniversary in another calendar recurs in that calendar, as a birthday does.
    @Test func anniversaryInAnotherCalendarRecursThere() throws {
        let config = try Self.config()
        let planner = Planner(config: config, defaultChannels: ["console"])
        let hebrew = try #require(Birthday(month: 3, day: 24, year: 2016, calendar: .hebrew))
        let contact = PlanningContact(id: "h", name: "H", birthday: nil, anniversary: hebrew)
        let event = try #require(planner.upcoming([contact], now: Self.at("2027-01-01T00:00Z", config), limit: 1).first)
        let birthday = hebrew.nextOccurrence(onOrAfter: LocalDate(iso: "2027-01-01")!, feb29: .feb28)
        #expect(event.occurrence == birthday.date)
        #expect(event.occurrence != LocalDate(iso: "2027-03-24"))
        #expect(Birthday(storedFormWithCalendar: hebrew.storedFormWithCalendar) == hebrew)
    }

    /// Acceptance: a contact-level `--offsets 0,7` beats its group's [0,1] and the global [0].
    @Test func contactSettingsWinOverTheGroupAndTheConfig() throws {
        let config = try Self.config("""
            [reminders]
            offsets = [0]
            time = "09:00"
            [groups.family]
            offsets = [0, 1]
            channels = ["desktop"]
            """)
        let planner = Planner(config: config, defaultChannels: ["console"])
        var contact = PlanningContact(id: "f", name: "F", birthday: Birthday(month: 3, day: 15), categories: ["family"])
        let plain = PlanningContact(id: "g", name: "G", birthday: Birthday(month: 3, day: 15))
        let now = Self.at("2027-03-01T00:00Z", config)
        #expect(planner.upcoming([plain], now: now, limit: 10).map(\.offsetDays) == [0])
        #expect(planner.upcoming([contact], now: now, limit: 10).map(\.offsetDays) == [1, 0])
        contact.settings = ContactSettings(offsets: [0, 7], time: 7 * 60 + 30)
        let events = planner.upcoming([contact], now: now, limit: 10)
        #expect(events.map(\.id) == ["f/7/2027-03-15", "f/0/2027-03-15"])
        #expect(events.map { planner.clock.iso8601($0.fireAt) } == ["2027-03-08T07:30:00+00:00", "2027-03-15T07:30:00+00:00"])
        #expect(events.allSatisfy { $0.channels == ["desktop"] })  // the group's, not set on the contact
        contact.settings?.channels = ["console"]
        #expect(planner.upcoming([contact], now: now, limit: 1).first?.channels == ["console"])
        // The dispatcher sees the same events, and looks back far enough for a contact's own offsets.
        let due = planner.due([contact], after: Self.at("2027-03-08T07:00Z", config), upTo: Self.at("2027-03-08T08:00Z", config))
        #expect(due.map(\.event.id) == ["f/7/2027-03-15"])
        contact.settings?.offsets = [0, 30]
        #expect(planner.lookback(for: [contact]) == 32 * 86_400)
        #expect(planner.lookback(for: [plain]) == planner.lookback)
    }

    /// Crash resumption and retries of an anniversary row (a four-part id).
    @Test func dispatcherDeliversAndResumesAnniversaries() async throws {
        let config = try Self.config("[general]\ntimezone = \"Europe/Berlin\"\n")
        let ledger = InMemoryLedger()
        let channel = RecordingChannel(name: "console")
        let dispatcher = Dispatcher(config: config, planner: Planner(config: config, defaultChannels: ["console"]),
                                    ledger: ledger, renderer: PlainRenderer(), channel: { _ in .success(channel) },
                                    jitter: { 0.5 })
        let contact = PlanningContact(id: "ann", name: "Ann", birthday: nil, includedAt: 0,
                                      anniversary: Birthday(month: 6, day: 20, year: 2015))
        _ = try await dispatcher.pass(contacts: [contact], now: Self.at("2027-06-19T12:00", config))
        channel.failNext(.temporary("HTTP 500"))
        let first = try await dispatcher.pass(contacts: [contact], now: Self.at("2027-06-20T09:00", config))
        #expect(first.retrying == 1)
        let row = try #require(try ledger.row(eventID: "ann/anniversary/0/2027-06-20", channel: "console"))
        #expect(row.state == .retrying)
        let second = try await dispatcher.pass(contacts: [contact], now: Self.at("2027-06-20T09:05", config))
        #expect(second.sent == 1, "\(second)")
        #expect(channel.delivered.map(\.id) == ["ann/anniversary/0/2027-06-20"])
        _ = try await dispatcher.pass(contacts: [contact], now: Self.at("2027-06-20T12:00", config))
        #expect(channel.delivered.count == 1)
    }

    /// Gift ideas are listed in the reminders before the day, in every shipped language.
    @Test func shippedRemindersListOpenGiftIdeasBeforeTheDay() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let date = try #require(LocalDate(iso: "2027-03-15"))
        let gifts = ["a book on Go", "tickets"]
        let before = templates.renderReminder(name: "Ada L", firstName: "Ada", daysUntil: 1, age: 37, date: date,
                                              locale: "en", giftIdeas: gifts)
        #expect(before.body.contains("Gift ideas: a book on Go, tickets"), "\(before.body)")
        let later = templates.renderReminder(name: "Ada L", firstName: "Ada", daysUntil: 7, age: nil, date: date,
                                             locale: "en", occasion: .anniversary, giftIdeas: gifts)
        #expect(later.body.contains("Gift ideas: a book on Go, tickets"), "\(later.body)")
        let onTheDay = templates.renderReminder(name: "Ada L", firstName: "Ada", daysUntil: 0, age: 37, date: date,
                                                locale: "en", giftIdeas: gifts)
        #expect(!onTheDay.body.contains("Gift ideas"), "\(onTheDay.body)")
        let none = templates.renderReminder(name: "Ada L", firstName: "Ada", daysUntil: 1, age: 37, date: date, locale: "en")
        #expect(!none.body.contains("Gift ideas"), "\(none.body)")
        for (locale, label) in [("de", "Geschenkideen: a book on Go, tickets"), ("fr", "Idées de cadeaux : a book on Go, tickets"),
                                ("es", "Ideas de regalo: a book on Go, tickets")] {
            let text = templates.renderReminder(name: "Ada", firstName: "Ada", daysUntil: 2, age: nil, date: date,
                                                locale: locale, giftIdeas: gifts)
            #expect(text.body.contains(label), "\(locale): \(text.body)")
        }
        // The list's `{{.}}` and `last()` leave the shipped texts cacheable.
        #expect(ReminderTextCache.namesArePlain(in: ShippedTemplates.all["en/reminder"] ?? ""))
    }

    @Test func notesAreATemplateVariable() throws {
        let folder = TestFolders.temporary.appendingPathComponent("buzz-notes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("en"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "{{name}}\n\n{{#notes}}* {{.}}\n{{/notes}}{{#has_gift_ideas}}ideas:{{#gift_ideas}} [{{.}}]{{/gift_ideas}}{{/has_gift_ideas}}\n"
            .write(to: folder.appendingPathComponent("en/reminder.mustache"), atomically: true, encoding: .utf8)
        let templates = try MessageTemplates(overrideDirectory: folder.path)
        let text = templates.renderReminder(name: "Ada", firstName: "Ada", daysUntil: 1, age: nil,
                                            date: LocalDate(iso: "2027-03-15")!, locale: "en",
                                            giftIdeas: ["x", "y"], notes: ["likes tea", "vegan"])
        #expect(text.body == "* likes tea\n* vegan\nideas: [x] [y]", "\(text.body)")
        // Unknown names are still typos.
        try "{{name}}\n\n{{gift_idea}}\n".write(to: folder.appendingPathComponent("en/anniversary.mustache"),
                                               atomically: true, encoding: .utf8)
        #expect(throws: TemplateError.self) { try MessageTemplates(overrideDirectory: folder.path) }
    }
}
