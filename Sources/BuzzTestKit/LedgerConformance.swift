import BirthdayBuzz
import Testing

/// What every `DeliveryLedger` must do, written once: a test target runs each
/// check against each ledger it has (`LedgerConformance.checks` as the
/// arguments of a parameterized test, one fresh empty ledger per run).
///
/// A check records its failures with `#expect`, naming the ledger's type, so a
/// ledger that disagrees with the others says where.
public enum LedgerConformance {
    public struct Check: Sendable, CustomTestStringConvertible {
        public let name: String
        let body: @Sendable (any DeliveryLedger) throws -> Void

        public var testDescription: String { name }

        /// Runs the check on `ledger`, which must be empty.
        public func run(on ledger: any DeliveryLedger) throws {
            try body(ledger)
        }
    }

    public static let checks: [Check] = [
        Check(name: "save and read back", body: saveAndReadBack),
        Check(name: "claim, record, unfinished", body: claimAndRecord),
        Check(name: "retry", body: retry),
        Check(name: "history of a contact", body: history),
        Check(name: "rows of an event", body: rowsOfAnEvent),
        Check(name: "wished contacts", body: wishedContacts),
        Check(name: "problems", body: problems),
        Check(name: "unsent reminder rows", body: unsentRows),
        Check(name: "kinds read back as written", body: kinds),
        Check(name: "rows by state, newest first", body: rowsByState),
        Check(name: "keys, watermark, epoch, prune", body: bookkeeping),
        Check(name: "the delivery lock is exclusive", body: lockIsExclusive),
    ]

    private static func name(_ ledger: any DeliveryLedger) -> String { "\(type(of: ledger))" }

    static func row(_ id: String, _ channel: String, contact: String = "ada", kind: Message.Kind = .reminder,
                    _ state: DeliveryState, fireAt: Int64 = 100, sentAt: Int64? = nil) -> LedgerRow {
        LedgerRow(eventID: id, channel: channel, contactID: contact, kind: kind, state: state, fireAt: fireAt,
                  sentAt: sentAt ?? (state == .sent ? fireAt : nil))
    }

    /// A row on the channel `hook`.
    static func row(_ id: String, contact: String = "ada", kind: Message.Kind = .reminder,
                    _ state: DeliveryState, fireAt: Int64 = 100, sentAt: Int64? = nil) -> LedgerRow {
        row(id, "hook", contact: contact, kind: kind, state, fireAt: fireAt, sentAt: sentAt)
    }

    static func saveAndReadBack(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        var row = LedgerRow(eventID: "ada/0/2027-03-15", channel: "hook", contactID: "ada", state: .retrying, fireAt: 100,
                            attempts: 2, lastError: "hook: HTTP 500", nextAttemptAt: 160, via: .fallback(for: ["desktop", "ntfy"]))
        try ledger.save(row, now: 120)
        let read = try ledger.row(eventID: row.eventID, channel: "hook")
        #expect(read == row, "\(who)")
        #expect(read?.via == .fallback(for: ["desktop", "ntfy"]), "\(who)")
        #expect(read?.createdAt == 120, "\(who): createdAt is the first save's time")
        #expect(try ledger.row(eventID: row.eventID, channel: "other") == nil, "\(who)")
        // A save replaces the row; createdAt stays the first one's.
        row.state = .sent
        row.sentAt = 200
        row.lastError = nil
        row.nextAttemptAt = nil
        row.via = .escalated(from: "desktop")
        try ledger.save(row, now: 200)
        let again = try ledger.row(eventID: row.eventID, channel: "hook")
        #expect(again == row, "\(who)")
        #expect(again?.createdAt == 120, "\(who): createdAt kept across saves")
        #expect(try ledger.rows(eventID: row.eventID).count == 1, "\(who)")
    }

    static func claimAndRecord(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        var first = row("ada/0/2027-03-15", .sending)
        first.attempts = 1
        try ledger.save(first, now: 100)
        #expect(try ledger.unfinished() == [first], "\(who): a claim is unfinished")
        // The outcome and the next claim, as one batch.
        var sent = first
        sent.state = .sent
        sent.sentAt = 101
        var next = row("bo/0/2027-03-15", contact: "bo", .sending)
        next.attempts = 1
        try ledger.save([sent, next], now: 101)
        #expect(try ledger.row(eventID: sent.eventID, channel: "hook") == sent, "\(who)")
        #expect(try ledger.unfinished() == [next], "\(who)")
        // Pending, sending and retrying are unfinished; the rest are not.
        for (index, state) in DeliveryState.allCases.enumerated() {
            try ledger.save(row("cy/0/2027-03-1\(index)", contact: "cy", state, fireAt: 200 + Int64(index)), now: 102)
        }
        let open = try ledger.unfinished().filter { $0.contactID == "cy" }
        #expect(Set(open.map(\.state)) == [.pending, .sending, .retrying], "\(who)")
        #expect(open.map(\.fireAt) == open.map(\.fireAt).sorted(), "\(who): unfinished by fire time")
        // A batch of three or more is saved whole too.
        let batch = (1...3).map { row("dee/\($0)/2027-03-15", contact: "dee", .pending) }
        try ledger.save(batch, now: 103)
        #expect(try batch.allSatisfy { try ledger.row(eventID: $0.eventID, channel: "hook") == $0 }, "\(who)")
    }

    static func retry(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        var failedA = row("a/0/2027-03-15", contact: "a", .failed)
        failedA.attempts = 5
        failedA.lastError = "hook: HTTP 400"
        let failedA2 = row("a/0/2027-03-15", "mail", contact: "a", .failed)
        let failedB = row("b/0/2027-03-15", contact: "b", .failed)
        let sentC = row("c/0/2027-03-15", contact: "c", .sent)
        let missedD = row("d/0/2027-03-15", contact: "d", .missed)
        try ledger.save([failedA, failedA2, failedB, sentC, missedD], now: 100)
        #expect(try ledger.retry(eventIDs: ["a/0/2027-03-15", "nobody"], now: 500) == 2, "\(who): the named event's failed rows")
        let retried = try ledger.row(eventID: failedA.eventID, channel: "hook")
        #expect(retried?.state == .retrying && retried?.nextAttemptAt == 500 && retried?.attempts == 0, "\(who)")
        #expect(try ledger.row(eventID: failedB.eventID, channel: "hook")?.state == .failed, "\(who): not named, kept")
        #expect(try ledger.retry(eventIDs: nil, now: 600) == 1, "\(who): every failed row left")
        #expect(try ledger.row(eventID: failedB.eventID, channel: "hook")?.nextAttemptAt == 600, "\(who)")
        #expect(try ledger.row(eventID: sentC.eventID, channel: "hook") == sentC, "\(who): sent untouched")
        #expect(try ledger.row(eventID: missedD.eventID, channel: "hook") == missedD, "\(who): missed untouched")
        #expect(try ledger.retry(eventIDs: nil, now: 700) == 0, "\(who)")
        #expect(try ledger.unfinished().count == 3, "\(who)")
    }

    static func history(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        let rows = [
            row("ada/0/2027-03-15", "mail", .sent, fireAt: 300),
            row("ada/0/2027-03-15", "hook", .failed, fireAt: 300),
            row("ada/ask/1", kind: .ask, .sent, fireAt: 100),
            row("ada/wish/2027-03-15", kind: .wish, .pending, fireAt: 400),
            row("ada/7/2027-03-15", .sent, fireAt: 300),
            row("bo/0/2027-03-15", contact: "bo", .sent, fireAt: 350),
        ]
        try ledger.save(rows, now: 100)
        let history = try ledger.history(for: "ada")
        #expect(history.map { "\($0.eventID) \($0.channel)" } == [
            "ada/wish/2027-03-15 hook", "ada/0/2027-03-15 hook", "ada/0/2027-03-15 mail", "ada/7/2027-03-15 hook", "ada/ask/1 hook",
        ], "\(who): newest first, then by event and channel")
        #expect(try ledger.history(for: "nobody").isEmpty, "\(who)")
    }

    static func rowsOfAnEvent(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        try ledger.save([row("ada/0/2027-03-15", "ntfy", .sent), row("ada/0/2027-03-15", "desktop", .failed),
                         row("ada/0/2027-03-15/snooze/1", "desktop", .pending), row("ada/1/2027-03-15", .sent)], now: 100)
        #expect(try ledger.rows(eventID: "ada/0/2027-03-15").map(\.channel) == ["desktop", "ntfy"], "\(who): by channel")
        #expect(try ledger.rows(eventID: "ada/0/2027").isEmpty, "\(who): the whole id, not a prefix")
    }

    static func wishedContacts(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        try ledger.save([
            row("ada/wish/2027-03-15", kind: .wish, .sent, sentAt: 1_000),
            row("bo/wish/2027-03-15", contact: "bo", kind: .wish, .sent, sentAt: 1_999),
            row("cy/wish/2027-03-15", contact: "cy", kind: .wish, .sent, sentAt: 2_000),  // the end is not in
            row("dee/wish/2027-03-15", contact: "dee", kind: .wish, .retrying),
            row("eve/ask/1", contact: "eve", kind: .ask, .sent, sentAt: 1_500),
            row("fay/0/2027-03-15", contact: "fay", .sent, sentAt: 1_500),
            row("gus/wish/2027-03-15", contact: "gus", kind: .wish, .sent, sentAt: 999),
        ], now: 100)
        #expect(try ledger.wishedContacts(sentFrom: 1_000, to: 2_000) == ["ada", "bo"], "\(who)")
        #expect(try ledger.wishedContacts(sentFrom: 3_000, to: 4_000).isEmpty, "\(who)")
    }

    static func problems(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        try ledger.save([
            row("ada/0/2027-03-15", .missed, fireAt: 200),  // a problem
            row("bo/0/2027-03-15", contact: "bo", .failed, fireAt: 210),
            row("bo/0/2027-03-15", "mail", contact: "bo", .sent, fireAt: 210),  // sent elsewhere: none
            row("cy/0/2027-03-15", contact: "cy", .failed, fireAt: 220),
            row("cy/0/2027-03-15", "mail", contact: "cy", .retrying, fireAt: 220),  // still trying: none
            row("dee/anniversary/0/2027-03-15", contact: "dee", kind: .anniversary, .failed, fireAt: 230),  // a problem
            row("eve/ask/1", contact: "eve", kind: .ask, .failed, fireAt: 240),  // not a reminder
            row("fay/0/2027-03-15", contact: "fay", .missed, fireAt: 50),  // too old
        ], now: 100)
        #expect(try ledger.problems(firedAfter: 100).map(\.eventID) == ["ada/0/2027-03-15", "dee/anniversary/0/2027-03-15"], "\(who)")
        #expect(try ledger.endedReminderRows(firedAfter: 100).map(\.eventID).sorted()
                == ["ada/0/2027-03-15", "cy/0/2027-03-15", "cy/0/2027-03-15", "dee/anniversary/0/2027-03-15"], "\(who)")
    }

    static func unsentRows(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        try ledger.save([
            row("ada/0/2027-03-15", .failed, fireAt: 300),
            row("ada/0/2027-03-15", "mail", .sent, fireAt: 300),
            row("bo/0/2027-03-15", contact: "bo", .pending, fireAt: 200),
            row("bo/0/2027-03-15", "mail", contact: "bo", .failed, fireAt: 200),
            row("cy/memorial/0/2027-03-15", contact: "cy", kind: .reminder(of: .memorial), .missed, fireAt: 250),
            row("dee/wish/2027-03-15", contact: "dee", kind: .wish, .failed, fireAt: 260),
            row("eve/0/2027-03-15", contact: "eve", .failed, fireAt: 90),
        ], now: 100)
        let unsent = try ledger.unsentReminderRows(firedAfter: 100)
        #expect(unsent.map { "\($0.eventID) \($0.channel)" }
                == ["bo/0/2027-03-15 hook", "bo/0/2027-03-15 mail", "cy/memorial/0/2027-03-15 hook"], "\(who)")
    }

    /// Every occasion kind's reminders, and the other messages, come back as the kind they were saved as.
    static func kinds(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        var written: [(Message.Kind, LedgerRow)] = []
        for kind in OccasionKind.all {
            let occasion = Occasion(kind, label: kind.isLabelled ? "Graduation" : nil)
            let id = PlannedEvent.id(contactID: "ada", occasion: occasion, offset: 0, occurrence: LocalDate(year: 2027, month: 3, day: 15)!)
            written.append((.reminder(of: kind), row(id, kind: .reminder(of: kind), .sent, fireAt: 200)))
        }
        written += [(.ask, row("ada/ask/1", kind: .ask, .sent, fireAt: 200)),
                    (.wish, row("ada/wish/2027-03-15", kind: .wish, .sent, fireAt: 200)),
                    (.notice, row("notice/2027-03-15", kind: .notice, .sent, fireAt: 200)),
                    (.digest, row("digest/weekly/2027-03-15", kind: .digest, .sent, fireAt: 200))]
        try ledger.save(written.map(\.1), now: 100)
        for (kind, saved) in written {
            #expect(try ledger.row(eventID: saved.eventID, channel: "hook")?.kind == kind, "\(who): \(kind)")
            #expect(try ledger.rows(kind: kind, firedAfter: 0).map(\.eventID) == [saved.eventID], "\(who): \(kind)")
            #expect(try ledger.rows(kind: kind, firedAfter: 200).isEmpty, "\(who): \(kind) after its fire time")
        }
        #expect(Set(try ledger.history(for: "ada").map(\.kind)) == Set(written.filter { $0.1.contactID == "ada" }.map(\.0)), "\(who)")
    }

    static func rowsByState(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        try ledger.save([
            row("a/0/2027-03-15", contact: "a", .failed, fireAt: 100),
            row("b/0/2027-03-15", contact: "b", .failed, fireAt: 300),
            row("c/0/2027-03-15", "mail", contact: "c", .missed, fireAt: 200),
            row("c/0/2027-03-15", "hook", contact: "c", .missed, fireAt: 200),
            row("d/0/2027-03-15", contact: "d", .sent, fireAt: 400),
        ], now: 100)
        #expect(try ledger.rows(in: [.failed, .missed]).map { "\($0.eventID) \($0.channel)" } == [
            "b/0/2027-03-15 hook", "c/0/2027-03-15 hook", "c/0/2027-03-15 mail", "a/0/2027-03-15 hook",
        ], "\(who): newest first, then by event and channel")
        #expect(try ledger.rows(in: []).isEmpty, "\(who)")
    }

    static func bookkeeping(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        #expect(try ledger.watermark() == nil && ledger.epoch() == nil, "\(who): a fresh ledger has neither")
        try ledger.setWatermark(500)
        try ledger.setEpoch(400)
        try ledger.setWatermark(600)
        #expect(try ledger.watermark() == 600 && ledger.epoch() == 400, "\(who)")
        try ledger.save([row("a/0/2027-03-15", contact: "a", .sent, fireAt: 100),
                         row("b/0/2027-03-15", contact: "b", .retrying, fireAt: 100),
                         row("c/0/2027-03-15", contact: "c", .failed, fireAt: 200),
                         row("d/0/2027-03-15", contact: "d", .missed, fireAt: 300)], now: 100)
        #expect(try ledger.keys(firedAfter: 100, upTo: 200) == [LedgerKey(eventID: "c/0/2027-03-15", channel: "hook")], "\(who)")
        #expect(try ledger.prune(firedBefore: 250) == 2, "\(who): old and finished rows only")
        #expect(try ledger.row(eventID: "b/0/2027-03-15", channel: "hook") != nil, "\(who): a retry is kept")
        #expect(try ledger.keys(firedAfter: .min, upTo: .max).count == 2, "\(who)")
    }

    static func lockIsExclusive(_ ledger: any DeliveryLedger) throws {
        let who = name(ledger)
        var held = try ledger.deliveryLock(wait: 0)
        #expect(held != nil, "\(who): a free lock is taken")
        #expect(try ledger.deliveryLock(wait: 0) == nil, "\(who): a second taker is refused while it is held")
        held = nil
        let again = try ledger.deliveryLock(wait: 0)
        #expect(again != nil, "\(who): dropped, it is free again")
    }
}
