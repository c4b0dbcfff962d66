import BirthdayBuzz
import BuzzStore
import Foundation
import Testing

/// The store side of sources (docs/design/sources.md): one transaction per source, prune
/// only on a complete read, decisions remembered by id across a removal.
@Suite struct SourceSyncStoreTests {
    let dir: TempDir
    let db: BuzzDatabase
    static let day: Int64 = 86_400
    static let start: Int64 = 1_800_000_000

    init() throws {
        dir = try TempDir()
        db = try BuzzDatabase(directory: dir.path + "/data")
    }

    @discardableResult
    func sync(_ source: String, _ cards: [ContactCard], coverage: SourceCoverage = .complete,
              now: Int64 = start) throws -> ImportSummary {
        try db.syncSource(source, label: source, now: now, includeByDefault: true) { session in
            for card in cards { try session.add(card: card) }
            return SourceOutcome(coverage: coverage, fingerprint: "fp-\(now)", state: "token-\(now)")
        }
    }

    @Test func aCompleteReadPrunesAnIncompleteOneDoesNot() throws {
        let ada = Fixture.card("a", "Ada", bday: try Fixture.birthday("1990-03-15"))
        let ben = Fixture.card("b", "Ben", bday: try Fixture.birthday("1980-01-02"))
        try sync("home", [ada, ben])
        let incomplete = try sync("home", [ada], coverage: .incomplete(reason: "b.vcf could not be read"))
        #expect(incomplete.removed == 0)
        #expect(incomplete.unpruned == ["home"])
        #expect(try db.contact("b") != nil)
        let complete = try sync("home", [ada])
        #expect(complete.removed == 1)
        #expect(try db.contact("b") == nil)
        #expect(try db.sourceState("home") == SourceState(label: "home", fingerprint: "fp-\(Self.start)",
                                                          state: "token-\(Self.start)", syncedAt: Self.start))
    }

    @Test func changesRemoveOnlyTheIdsNamedAndOnlyOfThisSource() throws {
        try sync("home", [Fixture.card("a", "Ada"), Fixture.card("b", "Ben")])
        try sync("work", [Fixture.card("w", "Wes")])
        let summary = try sync("home", [], coverage: .changes(removed: ["b", "w", "nobody"]))
        #expect(summary.removed == 1)
        #expect(try db.allContacts().map(\.id) == ["a", "w"])
    }

    @Test func aFeedThatThrowsWritesNothing() throws {
        try sync("home", [Fixture.card("a", "Ada")])
        struct Broken: Error {}
        #expect(throws: Broken.self) {
            try db.syncSource("home", label: "home", now: Self.start, includeByDefault: true) { session in
                try session.add(card: Fixture.card("z", "Zed"))
                throw Broken()
            }
        }
        #expect(try db.allContacts().map(\.id) == ["a"])
    }

    @Test func decisionsComeBackWithTheContactUntilTheyExpire() throws {
        let ada = Fixture.card("a", "Ada", bday: try Fixture.birthday("1990-03-15"))
        let ben = Fixture.card("b", "Ben", bday: try Fixture.birthday("1980-01-02"))
        try sync("home", [ada, ben])
        try db.setDecision(.skip, for: ["a", "b"], now: Self.start)
        try sync("home", [])
        #expect(try db.allContacts().isEmpty)

        // Ada comes back in another source 399 days later: still skipped.
        let back = try sync("work", [ada], now: Self.start + 399 * Self.day)
        #expect(back.restored == 1)
        #expect(try db.contact("a")?.decision == .skip)
        // Ben comes back after 401 days: the decision has expired; a new contact.
        let late = try sync("work", [ada, ben], now: Self.start + 401 * Self.day)
        #expect(late.restored == 0)
        #expect(try db.contact("b")?.decision == .include)
    }

    @Test func duplicatesAreReportedOnceEach() throws {
        let summary = try sync("home", [Fixture.card("a", "Ada 1"), Fixture.card("a", "Ada 2"), Fixture.card("a", "Ada 3"),
                                        Fixture.card("b", "Ben")])
        #expect(summary.duplicates == ["a"])
        #expect(try db.contact("a")?.name == "Ada 3")
    }
}
