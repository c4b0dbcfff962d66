import BirthdayBuzz
import BuzzStore
import Foundation
import Testing

/// Name days from a calendar file: the forms it is read in, the given-name
/// match without case or accents, and Debian's Hungarian calendar as it is.
@Suite struct NameDayTests {
    static let debianFile = "/usr/share/calendar/hu_HU/calendar.nevnapok"

    let dir: TempDir
    let db: BuzzDatabase

    init() throws {
        dir = try TempDir()
        db = try BuzzDatabase(directory: dir.path + "/data")
    }

    static func config(_ toml: String) throws -> BuzzConfig {
        try BuzzConfig(toml: "[general]\ntimezone = \"UTC\"\n" + toml, file: "t.toml", environment: [:],
                       systemTimeZone: TimeZone(identifier: "UTC")!, types: ConfigTypes(channels: [], sources: []))
    }

    static func prepare(_ text: String) throws -> any Sendable {
        let prepare = try #require(OccasionKind.nameday.prepare)
        return try prepare(text)
    }

    /// The name-day ids planned over `days` from 2026-12-01 for the store's contacts.
    func namedayIDs(_ text: String, days: Int = 366) throws -> [String] {
        var planner = Planner(config: try Self.config("[namedays]\nfile = \"names.txt\"\n"), defaultChannels: ["console"])
        planner.prepared = ["nameday": try Self.prepare(text)]
        let now: Int64 = 1_796_083_200  // 2026-12-01T00:00:00Z
        return planner.upcoming(try db.plannableContacts(for: planner), now: now, until: now + Int64(days) * 86_400,
                                limit: 1_000).map(\.id).filter { $0.contains("/nameday/") }
    }

    /// Contacts without birthdays, included by hand (name days need no date on the card).
    func load(_ people: [(id: String, name: String, given: String?)]) throws {
        let cards = people.map { ContactCard(id: $0.id, name: $0.name, firstName: $0.given) }
        try db.load("s", cards)
        try db.setDecision(.include, for: people.map(\.id), now: 1)
    }

    @Test func debiansHungarianCalendarWorksAsItIs() throws {
        guard FileManager.default.fileExists(atPath: Self.debianFile) else {
            if ProcessInfo.processInfo.environment["BUZZ_REQUIRE_SERVERS"] == "1" {
                Issue.record("\(Self.debianFile) is missing: scripts/deps.sh test installs Debian's calendar package")
            }
            return
        }
        let text = try String(contentsOfFile: Self.debianFile, encoding: .utf8)
        try load([("abel", "Abel Kovács", "Abel"), ("gyongyi", "GYÖNGYVÉR Szabó", nil), ("nobody", "Xq Zz", nil)])
        let ids = try namedayIDs(text)
        #expect(ids.contains("abel/nameday/0/2027-01-02"), "\(ids)")
        #expect(ids.contains("gyongyi/nameday/0/2027-01-08"), "\(ids)")
        #expect(!ids.contains { $0.hasPrefix("nobody/") })
    }

    @Test func bothLineFormsCaseAndAccentsAndTheFirstDayOfAName() throws {
        let text = """
            /* comment */
            # directive
            LANG=UTF-8
            03-15 Zoé, Léa
            04/01\tÉmile,\tLéa
            not a line 05-05 Abel
            """
        try load([("z", "Zoe Smith", "ZOE"), ("l", "Lea", nil), ("e", "Emile Zola", nil), ("a", "Abel", nil)])
        let ids = try namedayIDs(text)
        #expect(ids.sorted() == ["e/nameday/0/2027-04-01", "l/nameday/0/2027-03-15", "z/nameday/0/2027-03-15"])
    }

    @Test func aFileThatIsNotACalendarSaysWhere() throws {
        #expect(throws: OccasionFileError(line: 2, message: "2/30 is not a day of the year")) {
            try Self.prepare("01-01 Ann\n02-30 Bea\n")
        }
        #expect(throws: OccasionFileError.self) { try Self.prepare("no dates here\n") }
    }

    @Test func theTableIsOffWithoutAFileAndEnabledNeedsOne() throws {
        #expect(try Self.config("").reminds(.nameday) == false)
        #expect(try Self.config("[namedays]\nfile = \"x\"\n").reminds(.nameday))
        #expect(try Self.config("[namedays]\nfile = \"x\"\nenabled = false\n").reminds(.nameday) == false)
        #expect(throws: (any Error).self) { try Self.config("[namedays]\nenabled = true\n") }
    }
}
