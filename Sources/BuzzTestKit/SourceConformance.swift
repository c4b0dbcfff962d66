import BirthdayBuzz
import Testing

/// What every contact source type must do, written once: a test target lists
/// its source types in one table of `SourceConformance.Case`s, each with a
/// fixture that can change what the source holds, break it the ways that type
/// breaks, and sync it into a store through the library. A new source type is
/// one more row.
///
/// `checkLifecycle` runs, on one store:
/// 1. the first read imports every card;
/// 2. a changed card is updated (name and birthday);
/// 3. a deleted card is pruned;
/// 4. for each way the type can fail: a card is deleted from the source, the
///    source is broken, and the failed (or incomplete) read prunes nothing;
///    once repaired, the next read prunes the deleted card.
///
/// Failures are recorded with `#expect`, each naming the case and the step.
public enum SourceConformance {
    /// A contact as the checks compare it: id, name, birthday.
    public struct Seen: Sendable, Hashable, CustomStringConvertible {
        public var id: String
        public var name: String
        public var birthday: String?

        public init(id: String, name: String, birthday: String?) {
            self.id = id
            self.name = name
            self.birthday = birthday
        }

        public init(_ contact: Contact) {
            self.init(id: contact.id, name: contact.card.name, birthday: contact.card.birthday?.description)
        }

        public var description: String { "\(id) \(name) \(birthday ?? "-")" }
    }

    /// What one sync of the source reported.
    public struct SyncResult: Sendable, CustomStringConvertible {
        /// The source could not be read at all.
        public var failed: Bool
        /// The read was complete, so what is gone from the source was removed.
        public var pruned: Bool
        public var added: Int
        public var updated: Int
        public var removed: Int
        public var reason: String?

        public init(failed: Bool, pruned: Bool, added: Int, updated: Int, removed: Int, reason: String?) {
            self.failed = failed
            self.pruned = pruned
            self.added = added
            self.updated = updated
            self.removed = removed
            self.reason = reason
        }

        public var description: String {
            (failed ? "failed" : "synced") + (pruned ? ", pruned" : ", not pruned")
                + " (\(added) added, \(updated) updated, \(removed) removed)" + (reason.map { ": \($0)" } ?? "")
        }
    }

    /// One source type as a row of the conformance table.
    public struct Case: Sendable, CustomTestStringConvertible {
        public var name: String
        public var start: @Sendable () async throws -> any SourceConformanceFixture

        public init(_ name: String, start: @escaping @Sendable () async throws -> any SourceConformanceFixture) {
            self.name = name
            self.start = start
        }

        public var testDescription: String { name }
    }

    /// The sample cards, by UID: vCard 3.0 with a birthday each.
    public static func card(_ uid: String, _ name: String, birthday: String) -> String {
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nN:\(name);;;;\r\nBDAY:\(birthday)\r\nEND:VCARD\r\n"
    }

    static let ada = card("conf-ada", "Ada Lovelace", birthday: "1990-03-15")
    static let ben = card("conf-ben", "Ben Ray", birthday: "1985-01-02")
    static let benChanged = card("conf-ben", "Ben Ray-Park", birthday: "1985-01-03")
    static let cy = card("conf-cy", "Cy Diaz", birthday: "1970-07-07")

    static let seenAda = Seen(id: "conf-ada", name: "Ada Lovelace", birthday: "1990-03-15")
    static let seenBen = Seen(id: "conf-ben", name: "Ben Ray", birthday: "1985-01-02")
    static let seenBenChanged = Seen(id: "conf-ben", name: "Ben Ray-Park", birthday: "1985-01-03")
    static let seenCy = Seen(id: "conf-cy", name: "Cy Diaz", birthday: "1970-07-07")

    public static func checkLifecycle(_ row: Case, _ fixture: any SourceConformanceFixture,
                                      sourceLocation: SourceLocation = #_sourceLocation) async throws {
        func expectContacts(_ expected: Set<Seen>, _ step: String) throws {
            let seen = Set(try fixture.contacts())
            #expect(seen == expected, "\(row.name): \(step): the store holds \(seen.sorted { $0.id < $1.id })",
                    sourceLocation: sourceLocation)
        }

        // 1. The first read imports every card.
        try await fixture.write(["conf-ada": ada, "conf-ben": ben, "conf-cy": cy])
        var result = try await fixture.sync()
        #expect(!result.failed && result.added == 3, "\(row.name): first read: \(result)", sourceLocation: sourceLocation)
        try expectContacts([seenAda, seenBen, seenCy], "first read")

        // 2. A changed card is updated.
        try await fixture.write(["conf-ada": ada, "conf-ben": benChanged, "conf-cy": cy])
        result = try await fixture.sync()
        #expect(!result.failed && result.updated == 1 && result.added == 0 && result.removed == 0,
                "\(row.name): a changed card: \(result)", sourceLocation: sourceLocation)
        try expectContacts([seenAda, seenBenChanged, seenCy], "a changed card")

        // 3. A deleted card is pruned.
        try await fixture.write(["conf-ada": ada, "conf-ben": benChanged])
        result = try await fixture.sync()
        #expect(!result.failed && result.pruned && result.removed == 1,
                "\(row.name): a deleted card: \(result)", sourceLocation: sourceLocation)
        try expectContacts([seenAda, seenBenChanged], "a deleted card")

        // 4. A read that fails, or that is incomplete, prunes nothing, although a
        // card is gone (and one came back, so that a server has a card to fetch).
        #expect(!fixture.failures.isEmpty, "\(row.name): no way to fail", sourceLocation: sourceLocation)
        for failure in fixture.failures {
            try await fixture.write(["conf-ada": ada, "conf-cy": cy])
            try await fixture.breakSource(failure)
            result = try await fixture.sync()
            #expect(!result.pruned && result.removed == 0, "\(row.name): \(failure): \(result)",
                    sourceLocation: sourceLocation)
            #expect(result.reason != nil, "\(row.name): \(failure): no reason given", sourceLocation: sourceLocation)
            let kept = Set(try fixture.contacts())
            #expect(kept.isSuperset(of: [seenAda, seenBenChanged]), "\(row.name): \(failure): the store holds \(kept)",
                    sourceLocation: sourceLocation)

            // Repaired, the read is complete again and the deleted card goes.
            try await fixture.repair(failure)
            result = try await fixture.sync()
            #expect(!result.failed && result.pruned, "\(row.name): after \(failure), repaired: \(result)",
                    sourceLocation: sourceLocation)
            try expectContacts([seenAda, seenCy], "after \(failure), repaired")
            try await fixture.write(["conf-ada": ada, "conf-ben": benChanged])
            result = try await fixture.sync()
            try expectContacts([seenAda, seenBenChanged], "after \(failure), the card back")
        }
    }
}

/// A source of one type, a store, and a way to change, break and sync the
/// source, for `SourceConformance`'s checks.
public protocol SourceConformanceFixture {
    /// The ways this type fails a read, each named (`the folder is gone`, `HTTP 500 on the multiget`).
    var failures: [String] { get }
    /// Makes the source hold exactly these cards (vCard texts by UID).
    func write(_ cards: [String: String]) async throws
    /// Makes the next read meet `failure`.
    func breakSource(_ failure: String) async throws
    /// Undoes `breakSource(failure)`.
    func repair(_ failure: String) async throws
    /// Reads the source into the store through the library (`SourceSync`).
    func sync() async throws -> SourceConformance.SyncResult
    /// The store's contacts of this source.
    func contacts() throws -> [SourceConformance.Seen]
    /// Stops what the fixture started and removes its files.
    func stop() async
}
