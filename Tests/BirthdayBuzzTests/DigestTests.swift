import BuzzTestKit
import Foundation
import Testing
@testable import BirthdayBuzz

/// `[digests.NAME]`: the schedule, what a digest lists, its delivery through the
/// ledger (once per channel, caught up, missed, retried, sent by hand), its
/// config errors and its templates.
@Suite struct DigestTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func config(_ digest: String = "[digests.weekly]\nevery = \"week\"\ntime = \"08:00\"\nchannels = [\"a\", \"b\"]\n",
                       extra: String = "") throws -> BuzzConfig {
        try BuzzConfig(toml: """
            [general]
            timezone = "Europe/Berlin"
            locale = "en"
            \(extra)
            [channels.a]
            type = "console"
            [channels.b]
            type = "console"
            \(digest)
            """, file: "config.toml", environment: [:], systemTimeZone: utc, types: .shipped)
    }

    static func error(_ digest: String) -> String? {
        do {
            _ = try config(digest)
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func at(_ text: String) -> Int64 {
        PinnedNow(text)!.instant(in: WallClock(timeZone: TimeZone(identifier: "Europe/Berlin")!))
    }

    static func date(_ text: String) -> LocalDate { LocalDate(iso: text)! }

    static func contact(_ id: String, _ name: String, _ birthday: String, anniversary: Birthday? = nil,
                        giftIdeas: [String] = []) -> PlanningContact {
        PlanningContact(id: id, name: name, birthday: Birthday(storedForm: birthday), includedAt: 0, anniversary: anniversary,
                        giftIdeas: giftIdeas)
    }

    /// Around a year end: Dec 31, Jan 9 (the last day of a 14-day window from Monday
    /// 2027-12-27), Jan 10 (the day after), Dec 26 (the day before), an anniversary on Jan 1.
    static let contacts = [
        contact("c1", "Cleo", "1990-12-31", giftIdeas: ["a scarf"]),
        contact("c2", "Bea", "--01-09"),
        contact("c3", "Dan", "--01-10"),
        contact("c4", "Abe", "--12-26"),
        contact("c5", "Eve", "1980-05-05", anniversary: Birthday(month: 1, day: 1, year: 2000)),
        PlanningContact(id: "c6", name: "Fay", birthday: Birthday(month: 12, day: 28), isIncluded: false),
    ]

    // MARK: Schedule

    @Test func weeklyMonthlyAndDailyFireOnTheirDaysAtTheirTime() throws {
        let weekly = DigestSchedule(config: try Self.config())
        let events = weekly.events(after: Self.at("2027-12-20T08:00"), upTo: Self.at("2028-01-10T08:00"))
        #expect(events.map(\.id) == ["%digest/weekly/2027-12-27", "%digest/weekly/2028-01-03", "%digest/weekly/2028-01-10"])
        #expect(events.first?.fireAt == Self.at("2027-12-27T08:00"))
        #expect(events.first?.channels == ["a", "b"])

        let monthly = DigestSchedule(config: try Self.config("[digests.m]\nevery = \"month\"\non = 28\nchannels = [\"a\"]\n"))
        #expect(monthly.events(after: Self.at("2028-01-01T00:00"), upTo: Self.at("2028-04-01T00:00")).map(\.id)
                == ["%digest/m/2028-01-28", "%digest/m/2028-02-28", "%digest/m/2028-03-28"])
        // Default time: reminders.time.
        #expect(monthly.next(after: Self.at("2028-01-28T08:59")).first?.fireAt == Self.at("2028-01-28T09:00"))

        let friday = DigestSchedule(config: try Self.config("[digests.f]\nevery = \"week\"\non = \"Friday\"\nchannels = [\"a\"]\n"))
        #expect(friday.next(after: Self.at("2027-12-27T00:00")).map(\.id) == ["%digest/f/2027-12-31"])
        #expect(friday.previousFire(friday.digests[0], before: Self.at("2027-12-31T09:00")) == Self.at("2027-12-24T09:00"))
        #expect(friday.previousFire(friday.digests[0], before: Self.at("2027-12-31T09:00:01")) == Self.at("2027-12-31T09:00"))
    }

    /// DST as for reminders: 02:30 on the spring-forward night fires at 03:30 CEST
    /// (01:30Z); on the fall-back night, once, at the first 02:30 (CEST, 00:30Z).
    @Test func aTimeInADSTGapOrOverlapFiresAsRemindersDo() throws {
        let daily = DigestSchedule(config: try Self.config("[digests.d]\nevery = \"day\"\ntime = \"02:30\"\nchannels = [\"a\"]\n"))
        let spring = daily.events(after: Self.at("2027-03-28T00:00"), upTo: Self.at("2027-03-28T12:00"))
        #expect(spring.map(\.fireAt) == [PinnedNow("2027-03-28T01:30Z")!.instant(in: WallClock(timeZone: Self.utc))])
        let autumn = daily.events(after: Self.at("2027-10-31T00:00"), upTo: Self.at("2027-10-31T12:00"))
        #expect(autumn.map(\.fireAt) == [PinnedNow("2027-10-31T00:30Z")!.instant(in: WallClock(timeZone: Self.utc))])
    }

    @Test func idsParseBack() {
        #expect(DigestSchedule.parse("%digest/weekly/2027-12-27")?.date == Self.date("2027-12-27"))
        #expect(DigestSchedule.parse("%digest/weekly/manual/3")?.manual == 3)
        #expect(DigestSchedule.parse("%digest/weekly/manual/0") == nil)
        #expect(DigestSchedule.parse("weekly/0/2027-12-27") == nil)
    }

    // MARK: Content

    @Test func listsDThroughDPlusDaysMinusOneInDateOrderAcrossAYearEnd() throws {
        let schedule = DigestSchedule(config: try Self.config())
        let content = schedule.content(schedule.digests[0], from: Self.date("2027-12-27"), contacts: Self.contacts,
                                       problems: [], missingCount: 4)
        #expect(content.days == 14)
        #expect(content.entries.map(\.name) == ["Cleo", "Eve", "Bea"])
        #expect(content.entries.map(\.date) == [Self.date("2027-12-31"), Self.date("2028-01-01"), Self.date("2028-01-09")])
        #expect(content.entries.map(\.daysUntil) == [4, 5, 13])
        #expect(content.entries.map(\.occasion) == [.birthday, .anniversary, .birthday])
        #expect(content.entries.map(\.age) == [37, 28, nil])
        #expect(content.entries[0].giftIdeas == ["a scarf"])
        #expect(content.entries.allSatisfy { $0.label == nil })
        #expect(content.missingCount == 4)
    }

    @Test func aYearLongWindowListsADateTwiceWhenItComesTwice() throws {
        let schedule = DigestSchedule(config: try Self.config("[digests.y]\nevery = \"month\"\ndays = 366\nchannels = [\"a\"]\n"))
        let content = schedule.content(schedule.digests[0], from: Self.date("2027-03-01"), contacts: [Self.contact("x", "X", "--03-01")],
                                       problems: [], missingCount: 0)
        // 2027-03-01 … 2028-02-29 (2028 is a leap year): once. From 2027-02-28 … 2028-02-28: twice.
        #expect(content.entries.map(\.date) == [Self.date("2027-03-01")])
        let twice = schedule.content(schedule.digests[0], from: Self.date("2026-03-01"), contacts: [Self.contact("x", "X", "--03-01")],
                                     problems: [], missingCount: 0)
        #expect(twice.entries.map(\.date) == [Self.date("2026-03-01"), Self.date("2027-03-01")])
    }

    // MARK: Delivery

    /// Digests through the in-memory ledger, to recording channels `a` and `b`.
    struct Rig {
        let config: BuzzConfig
        let ledger = InMemoryLedger()
        let a = RecordingChannel(name: "a")
        let b = RecordingChannel(name: "b")
        let digests: DigestDispatcher
        var contacts = DigestTests.contacts

        init(_ config: BuzzConfig) throws {
            self.config = config
            let a = self.a, b = self.b
            digests = DigestDispatcher(config: config, ledger: ledger,
                                       renderer: TemplateDigests(templates: try MessageTemplates()),
                                       channel: { $0 == "a" ? .success(a) : .success(b) }, jitter: { 0.5 })
        }

        /// A pass at `now`, the watermark where the previous one left it (as `tick` hands it over).
        func pass(_ now: String, missing: Int = 0) async throws -> DispatchReport {
            let instant = DigestTests.at(now)
            let watermark = try ledger.watermark()
            if try ledger.epoch() == nil { try ledger.setEpoch(watermark ?? instant - 12 * 3_600) }
            let report = try await digests.pass(contacts: contacts, missingCount: { missing }, watermark: watermark, now: instant)
            try ledger.setWatermark(instant)
            return report
        }
    }

    struct TemplateDigests: DigestRendering {
        let templates: MessageTemplates
        func digest(_ content: DigestContent, id: String) -> Message {
            let text = templates.renderDigest(content, locale: "en")
            return Message(kind: .digest, id: id, title: text.title, body: text.body, occurrence: content.date)
        }
    }

    @Test func aWeeklyDigestIsSentOncePerWeekAndChannelHoweverManyPasses() async throws {
        let rig = try Rig(try Self.config())
        for now in ["2027-12-26T12:00", "2027-12-27T07:59", "2027-12-27T08:00", "2027-12-27T08:01", "2027-12-27T20:00",
                    "2027-12-28T08:00", "2028-01-03T08:30", "2028-01-03T09:00"] {
            let report = try await rig.pass(now)
            #expect(report.failed == 0 && report.missed == 0, "\(now): \(report)")
        }
        #expect(rig.a.delivered.map(\.id) == ["%digest/weekly/2027-12-27", "%digest/weekly/2028-01-03"])
        #expect(rig.b.delivered.map(\.id) == ["%digest/weekly/2027-12-27", "%digest/weekly/2028-01-03"])
        let first = try #require(rig.a.delivered.first)
        #expect(first.kind == .digest)
        #expect(first.title == "Coming up: 3 occasions in the next 14 days")
        #expect(first.body.contains("Cleo turns 37"))
        #expect(first.body.contains("Gift ideas: a scarf"))
        #expect(first.body.contains("Eve's anniversary (28 years)"))
        #expect(!first.body.contains("Dan") && !first.body.contains("Abe") && !first.body.contains("Fay"))
        let rows = rig.ledger.all.filter { $0.kind == .digest }
        #expect(rows.count == 4 && rows.allSatisfy { $0.state == .sent && $0.contactID == "" })
    }

    @Test func oneTooLateForCatchUpIsMissedNotSentAndNoProblem() async throws {
        let rig = try Rig(try Self.config())
        _ = try await rig.pass("2027-12-26T12:00")
        // The machine was off from Sunday until Monday 21:00: 13 h late, catch_up is 12 h.
        let report = try await rig.pass("2027-12-27T21:00")
        #expect(report.missed == 2 && report.sent == 0, "\(report)")
        #expect(rig.a.delivered.isEmpty && rig.b.delivered.isEmpty)
        #expect(rig.ledger.all.filter { $0.kind == .digest }.map(\.state) == [.missed, .missed])
        #expect(try rig.ledger.problems(firedAfter: 0).isEmpty)
        // Within catch-up it is sent late, once.
        let late = try Rig(try Self.config())
        _ = try await late.pass("2027-12-26T12:00")
        #expect(try await late.pass("2027-12-27T19:00").sent == 2)
        #expect(try await late.pass("2027-12-27T19:30").due == 0)
    }

    @Test func problemsSinceThePreviousScheduledDigestAreListed() async throws {
        let rig = try Rig(try Self.config())
        for (id, fire) in [("c1/0/2027-12-19", "2027-12-19T09:00"), ("c1/1/2027-12-24", "2027-12-23T09:00")] {
            try rig.ledger.save(LedgerRow(eventID: id, channel: "a", contactID: "c1", kind: .reminder, state: .missed,
                                          fireAt: Self.at(fire), lastError: "due while BirthdayBuzz was not running"),
                                now: Self.at(fire))
        }
        _ = try await rig.pass("2027-12-26T12:00")
        _ = try await rig.pass("2027-12-27T08:00", missing: 3)
        let body = try #require(rig.a.delivered.first?.body)
        // The one before the previous digest (Monday 2027-12-20 08:00) was in that one.
        #expect(body.contains("- Cleo, birthday Friday, December 24: due while BirthdayBuzz was not running (buzz wish Cleo)"), "\(body)")
        #expect(!body.contains("December 19"))
        #expect(body.contains("Contacts without a birthday: 3"))
    }

    @Test func aTemporaryFailureIsRetriedWithBackoffAndSentOnce() async throws {
        let rig = try Rig(try Self.config())
        _ = try await rig.pass("2027-12-26T12:00")
        rig.a.failNext(.temporary("503"))
        let first = try await rig.pass("2027-12-27T08:00")
        #expect(first.retrying == 1 && first.sent == 1, "\(first)")
        let row = try #require(try rig.ledger.row(eventID: "%digest/weekly/2027-12-27", channel: "a"))
        #expect(row.state == .retrying && row.nextAttemptAt == Self.at("2027-12-27T08:00") + 30)
        #expect(try await rig.pass("2027-12-27T08:00:10").sent == 0)
        #expect(try rig.digests.nextWake(now: Self.at("2027-12-27T08:00:10")) == Self.at("2027-12-27T08:00:30"))
        #expect(try await rig.pass("2027-12-27T08:00:31").sent == 1)
        #expect(rig.a.delivered.map(\.id) == ["%digest/weekly/2027-12-27"])
        #expect(rig.b.delivered.map(\.id) == ["%digest/weekly/2027-12-27"])
        // Idle: the next wake is next Monday's digest.
        #expect(try rig.digests.nextWake(now: Self.at("2027-12-27T09:00")) == Self.at("2028-01-03T08:00"))
    }

    @Test func emptyFalseSkipsADigestWithNothingAhead() async throws {
        var rig = try Rig(try Self.config("[digests.weekly]\nevery = \"week\"\ntime = \"08:00\"\nempty = false\nchannels = [\"a\"]\n"))
        rig.contacts = []
        _ = try await rig.pass("2027-12-26T12:00")
        let report = try await rig.pass("2027-12-27T08:00")
        #expect(report.skipped == 1 && rig.a.delivered.isEmpty)
        // With empty = true (the default), the same digest is sent.
        var sent = try Rig(try Self.config("[digests.weekly]\nevery = \"week\"\ntime = \"08:00\"\nchannels = [\"a\"]\n"))
        sent.contacts = []
        _ = try await sent.pass("2027-12-26T12:00")
        _ = try await sent.pass("2027-12-27T08:00")
        #expect(sent.a.delivered.map(\.title) == ["Coming up: no birthdays in the next 14 days"])
    }

    @Test func sentByHandUnderTheNextManualNumberAndTheScheduledOneStays() async throws {
        let rig = try Rig(try Self.config())
        _ = try await rig.pass("2027-12-26T12:00")
        let first = try #require(try await rig.digests.sendNow(named: "weekly", contacts: Self.contacts, missingCount: 0,
                                                               now: Self.at("2027-12-27T07:00")))
        #expect(first.sent == 2)
        _ = try await rig.digests.sendNow(named: "weekly", contacts: Self.contacts, missingCount: 0, now: Self.at("2027-12-27T07:30"))
        #expect(try await rig.digests.sendNow(named: "nope", contacts: [], missingCount: 0, now: 0) == nil)
        _ = try await rig.pass("2027-12-27T08:00")
        #expect(rig.a.delivered.map(\.id) == ["%digest/weekly/manual/1", "%digest/weekly/manual/2", "%digest/weekly/2027-12-27"])
        #expect(rig.b.delivered.map(\.id) == rig.a.delivered.map(\.id))
    }

    // MARK: Config

    @Test func configDefaultsAndErrors() throws {
        let config = try Self.config("[digests.weekly]\nevery = \"week\"\nchannels = [\"a\"]\n[digests.m]\nevery = \"month\"\nchannels = [\"a\"]\n"
                                     + "[digests.d]\nevery = \"day\"\nchannels = [\"a\", \"a\", \"desktop\"]\ndays = 1\nempty = false\n")
        #expect(config.digests.map(\.name) == ["d", "m", "weekly"])
        #expect(config.digests.map(\.days) == [1, 31, 14])
        #expect(config.digests.map(\.on) == [1, 1, 1])
        #expect(config.digests.map(\.time) == [nil, nil, nil])
        #expect(config.digests.map(\.empty) == [false, true, true])
        #expect(config.digests[0].channels == ["a", "desktop"])

        let head = "[digests.w]\nevery = \"week\"\n"  // lines 9 and 10 of the file
        #expect(Self.error(head) == "config.toml:9:1: digests.w.channels: missing: name the channels it goes to, e.g. [\"mail\"]")
        #expect(Self.error(head + "channels = []\n")?.hasPrefix("config.toml:11:1: digests.w.channels: is empty") == true)
        #expect(Self.error(head + "channels = [\"nope\"]\n")
                == "config.toml:11:1: digests.w.channels: no channel named \"nope\" (define [channels.nope])")
        #expect(Self.error(head + "channels = [\"a\"]\non = \"mondey\"\n")
                == "config.toml:12:1: digests.w.on: \"mondey\" is not a weekday (monday … sunday)")
        #expect(Self.error(head + "channels = [\"a\"]\ndays = 0\n") == "config.toml:12:1: digests.w.days: must be between 1 and 366, not 0")
        #expect(Self.error(head + "channels = [\"a\"]\ndays = 367\n")?.contains("must be between 1 and 366, not 367") == true)
        #expect(Self.error(head + "channels = [\"a\"]\ntime = \"25:00\"\n")
                == "config.toml:12:1: digests.w.time: \"25:00\" is not a time of day (HH:MM, 24-hour)")
        #expect(Self.error(head + "channels = [\"a\"]\nempty = \"no\"\n") == "config.toml:12:1: digests.w.empty: expected true or false, found string")
        #expect(Self.error(head + "channels = [\"a\"]\nbogus = 1\n") == "config.toml:12:1: digests.w.bogus: unknown key")
        #expect(Self.error("[digests.w]\nevery = \"fortnight\"\nchannels = [\"a\"]\n")
                == "config.toml:10:1: digests.w.every: \"fortnight\" is not one of \"day\", \"week\", \"month\"")
        #expect(Self.error("[digests.w]\nchannels = [\"a\"]\n")?.hasPrefix("config.toml:9:1: digests.w.every: missing") == true)
        #expect(Self.error("[digests.m]\nevery = \"month\"\non = 29\nchannels = [\"a\"]\n")
                == "config.toml:11:1: digests.m.on: must be a day between 1 and 28, not 29")
        #expect(Self.error("[digests.m]\nevery = \"month\"\non = \"monday\"\nchannels = [\"a\"]\n")
                == "config.toml:11:1: digests.m.on: expected an integer, found string")
        #expect(Self.error("[digests.d]\nevery = \"day\"\non = \"monday\"\nchannels = [\"a\"]\n")?.contains("digests.d.on: a daily digest") == true)
        #expect(Self.error("[digests.\"a/b\"]\nevery = \"day\"\nchannels = [\"a\"]\n")?.contains("a digest's name is letters") == true)
    }

    // MARK: Templates

    @Test(arguments: [("en", "Coming up: 3 occasions in the next 14 days", "Cleo turns 37"),
                      ("de", "Demnächst: 3 Anlässe in den nächsten 14 Tagen", "Cleo wird 37"),
                      ("fr", "À venir : 3 événements dans les 14 prochains jours", "Cleo aura 37 ans"),
                      ("es", "Próximamente: 3 fechas especiales en los próximos 14 días", "Cleo cumple 37 años")])
    func eachLanguageRendersADigest(locale: String, title: String, line: String) throws {
        let templates = try MessageTemplates()
        let schedule = DigestSchedule(config: try Self.config())
        let problem = DeliveryProblem(eventID: "c2/0/2027-12-24", contactID: "c2", occasion: .birthday,
                                      occurrence: Self.date("2027-12-24"), fireAt: 0, state: .missed, channels: ["a"],
                                      reason: "timeout")
        let content = schedule.content(schedule.digests[0], from: Self.date("2027-12-27"), contacts: Self.contacts,
                                       problems: [problem], missingCount: 2)
        let text = templates.renderDigest(content, locale: locale)
        #expect(text.locale == locale)
        #expect(text.title == title)
        #expect(text.body.contains(line), "\(text.body)")
        #expect(text.body.contains("a scarf"))
        #expect(text.body.contains("Bea") && text.body.contains("timeout (buzz wish Bea)"), "\(text.body)")
        #expect(text.body.contains(": 2 (buzz list --missing)"), "\(text.body)")
        // A week of only birthdays, one of them: the title says so.
        var one = content
        one.days = 7
        one.entries = [content.entries[0]]
        one.problems = []
        one.missingCount = 0
        let short = templates.renderDigest(one, locale: locale)
        #expect(!short.body.contains("buzz list --missing") && !short.body.contains("timeout"))
        if locale == "en" { #expect(short.title == "Coming up: 1 birthday this week") }
        if locale == "de" { #expect(short.title == "Demnächst: 1 Geburtstag diese Woche") }
    }

    @Test func anOverrideWithAnUnknownVariableIsRefused() throws {
        #expect(throws: TemplateError.self) {
            _ = try MessageTemplates(shipped: ShippedTemplates.all.merging(["en/digest": "T {{nmae}}\n\nB\n"]) { $1 })
        }
    }
}
