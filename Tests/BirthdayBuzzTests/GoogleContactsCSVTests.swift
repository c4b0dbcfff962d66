import Testing
@testable import BirthdayBuzz

@Suite struct GoogleContactsCSVTests {
    // MARK: Fixtures (invented data)

    static let oldHeader = "Name,Given Name,Additional Name,Family Name,Yomi Name,Given Name Yomi,"
        + "Additional Name Yomi,Family Name Yomi,Name Prefix,Name Suffix,Initials,Nickname,Short Name,"
        + "Maiden Name,Birthday,Gender,Location,Billing Information,Directory Server,Mileage,Occupation,"
        + "Hobby,Sensitivity,Priority,Subject,Notes,Language,Photo,Group Membership,"
        + "E-mail 1 - Type,E-mail 1 - Value,E-mail 2 - Type,E-mail 2 - Value,"
        + "Phone 1 - Type,Phone 1 - Value,Phone 2 - Type,Phone 2 - Value,"
        + "Organization 1 - Type,Organization 1 - Name,Event 1 - Type,Event 1 - Value"

    /// An old-format row: cells by column name, the rest empty.
    static func oldRow(_ cells: [String: String]) -> String {
        row(header: oldHeader, cells)
    }

    static let newHeader = "First Name,Middle Name,Last Name,Phonetic First Name,Phonetic Middle Name,"
        + "Phonetic Last Name,Name Prefix,Name Suffix,Nickname,File As,Organization Name,Organization Title,"
        + "Organization Department,Birthday,Notes,Photo,Labels,E-mail 1 - Label,E-mail 1 - Value,"
        + "E-mail 2 - Label,E-mail 2 - Value,Phone 1 - Label,Phone 1 - Value,Phone 2 - Label,Phone 2 - Value,"
        + "Event 1 - Label,Event 1 - Value"

    static let newColumns = columns(newHeader)

    static func newRow(_ cells: [String: String]) -> String {
        row(columns: newColumns, cells)
    }

    static func columns(_ header: String) -> [String] {
        header.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    static func row(header: String, _ cells: [String: String]) -> String {
        row(columns: columns(header), cells)
    }

    static func row(columns: [String], _ cells: [String: String]) -> String {
        for key in cells.keys { precondition(columns.contains(key), "no column \(key)") }
        return columns.map { cells[$0] ?? "" }.joined(separator: ",")
    }

    static func entries(_ text: String) throws -> [ImportEntry] {
        var result: [ImportEntry] = []
        try GoogleContactsCSV.parse(text) { result.append($0) }
        return result
    }

    static func cards(_ text: String) throws -> [ContactCard] {
        try entries(text).compactMap { entry in
            if case .card(let card, _) = entry { return card }
            return nil
        }
    }

    // MARK: Tests

    @Test func oldHeaderSeveralRows() throws {
        let text = [
            Self.oldHeader,
            Self.oldRow(["Name": "Wendel Quarry", "Given Name": "Wendel", "Family Name": "Quarry",
                         "Birthday": "1984-07-09", "Group Membership": "Chess Club ::: * myContacts",
                         "E-mail 1 - Type": "* Home", "E-mail 1 - Value": "wendel@example.org",
                         "Phone 1 - Type": "Mobile", "Phone 1 - Value": "+1 555 0100",
                         "Phone 2 - Type": "Work", "Phone 2 - Value": "555-0101",
                         "Event 1 - Type": "Anniversary", "Event 1 - Value": "2010-06-12"]),
            Self.oldRow(["Name": "Orla Fennimore", "Given Name": "Orla", "Birthday": "--11-30",
                         "Phone 1 - Type": "Home", "Phone 1 - Value": "555-0199"]),
            Self.oldRow(["Name": "Dr. Pim Tussock", "E-mail 1 - Type": "Other",
                         "E-mail 1 - Value": "pim@example.net"]),
        ].joined(separator: "\n") + "\n"
        let entries = try Self.entries(text)
        #expect(entries.count == 3)
        let cards = try Self.cards(text)
        #expect(cards.count == 3)

        let wendel = cards[0]
        #expect(wendel.name == "Wendel Quarry")
        #expect(wendel.firstName == "Wendel")
        #expect(wendel.birthday == Birthday(month: 7, day: 9, year: 1984))
        #expect(wendel.anniversary == Birthday(month: 6, day: 12, year: 2010))
        #expect(wendel.emails == [Email(address: "wendel@example.org", preferred: true)])
        #expect(wendel.phones == [Phone(number: "+1 555 0100", kind: .cell),
                                  Phone(number: "555-0101", kind: .work)])
        #expect(wendel.categories == ["Chess Club"])
        #expect(wendel.language == nil)
        #expect(wendel.hasUID == false)
        #expect(wendel.id == ContactIdentity.derivedID(name: "Wendel Quarry", firstEmail: "wendel@example.org",
                                                       firstPhone: "+1 555 0100"))
        #expect(wendel.id.hasPrefix("h-"))

        #expect(cards[1].name == "Orla Fennimore")
        #expect(cards[1].birthday == Birthday(month: 11, day: 30))
        #expect(cards[1].phones == [Phone(number: "555-0199", kind: .home)])

        // No Given Name: first word of the name.
        #expect(cards[2].firstName == "Dr.")
        #expect(cards[2].birthday == nil)
        #expect(cards[2].emails == [Email(address: "pim@example.net")])

        // Card numbers are the data row numbers.
        let problems = entries.map { entry -> [CardProblem] in
            if case .card(_, let problems) = entry { return problems }
            return []
        }
        #expect(problems.allSatisfy { $0.isEmpty })
    }

    @Test func newHeader() throws {
        let text = [
            Self.newHeader,
            Self.newRow(["First Name": "Marisol", "Middle Name": "T.", "Last Name": "Brindle",
                         "Name Prefix": "Prof.", "Name Suffix": "Jr.", "Birthday": "1975-01-31",
                         "Labels": "* myContacts ::: Neighbours ::: * starred",
                         "E-mail 1 - Label": "Work", "E-mail 1 - Value": "mbrindle@example.com",
                         "Phone 1 - Label": "* Mobile", "Phone 1 - Value": "555-0142",
                         "Phone 2 - Label": "Pager", "Phone 2 - Value": "555-0143",
                         "Event 1 - Label": "Anniversary", "Event 1 - Value": "--09-02"]),
            Self.newRow(["Last Name": "Okonkwo-Lee"]),
        ].joined(separator: "\n")
        let cards = try Self.cards(text)
        #expect(cards.count == 2)
        let card = cards[0]
        #expect(card.name == "Prof. Marisol T. Brindle Jr.")
        #expect(card.firstName == "Marisol")
        #expect(card.birthday == Birthday(month: 1, day: 31, year: 1975))
        #expect(card.anniversary == Birthday(month: 9, day: 2))
        #expect(card.emails == [Email(address: "mbrindle@example.com")])
        #expect(card.phones == [Phone(number: "555-0142", kind: .cell, preferred: true),
                                Phone(number: "555-0143", kind: .other)])
        #expect(card.categories == ["Neighbours", "starred"])
        #expect(card.hasUID == false)

        #expect(cards[1].name == "Okonkwo-Lee")
        #expect(cards[1].firstName == "Okonkwo-Lee")
    }

    /// Issue 10 point 13: names drop BiDi override and isolate controls, as vCards do.
    @Test func bidiControlsAreStrippedFromNames() throws {
        let text = [
            Self.newHeader,
            Self.newRow(["First Name": "\u{202E}Eve", "Last Name": "Ev\u{2066}il\u{2069}", "Birthday": "1900-04-01"]),
        ].joined(separator: "\n")
        let card = try #require(try Self.cards(text).first)
        #expect(card.name == "Eve Evil")
        #expect(card.firstName == "Eve")
        // khard's placeholder year 1900 reads as no year here too (one Birthday.placeholderYears).
        #expect(card.birthday == Birthday(month: 4, day: 1))
    }

    @Test func quotedFieldWithCommaNewlineAndQuote() throws {
        let text = Self.newHeader + "\n"
            + Self.newRow(["First Name": "\"Ansel, \"\"Ace\"\"\n\tJunior\"", "Last Name": "Varga",
                           "Birthday": "1990-03-15", "Notes": "\"Notes, with\nlines\"", "Labels": "\"Band\""])
            + "\n" + Self.newRow(["First Name": "Bea", "Birthday": "2001-12-01"]) + "\n"
        let entries = try Self.entries(text)
        #expect(entries.count == 2)
        let cards = try Self.cards(text)
        #expect(cards.count == 2)
        #expect(cards[0].name == "Ansel, \"Ace\" Junior Varga")
        #expect(!cards[0].name.contains("\n"))
        #expect(cards[0].firstName == "Ansel, \"Ace\" Junior")
        #expect(cards[0].birthday == Birthday(month: 3, day: 15, year: 1990))
        #expect(cards[0].categories == ["Band"])
        #expect(cards[1].name == "Bea")
        #expect(cards[1].birthday == Birthday(month: 12, day: 1, year: 2001))
    }

    @Test func byteOrderMarkAndCRLF() throws {
        let text = "\u{FEFF}" + [
            Self.oldHeader,
            Self.oldRow(["Name": "Tamsin Rook", "Birthday": "1999-04-01"]),
            Self.oldRow(["Name": "\"Halvard\r\nBirch\"", "Birthday": "--05-06"]),
        ].joined(separator: "\r\n") + "\r\n"
        #expect(GoogleContactsCSV.looksLikeHeader("\u{FEFF}" + Self.oldHeader + "\r"))
        let cards = try Self.cards(text)
        #expect(cards.count == 2)
        #expect(cards[0].name == "Tamsin Rook")
        #expect(cards[0].birthday == Birthday(month: 4, day: 1, year: 1999))
        #expect(cards[1].name == "Halvard Birch")
        #expect(cards[1].birthday == Birthday(month: 5, day: 6))
    }

    @Test func birthdayWithoutYear() throws {
        let text = [
            Self.newHeader,
            Self.newRow(["First Name": "Iona", "Birthday": " --03-15"]),
            Self.newRow(["First Name": "Rafe", "Birthday": "--02-29"]),
        ].joined(separator: "\n")
        let cards = try Self.cards(text)
        #expect(cards.map(\.birthday) == [Birthday(month: 3, day: 15), Birthday(month: 2, day: 29)])
        #expect(cards[0].birthday?.year == nil)
    }

    @Test func year1604Or0000MeansUnknownYear() throws {
        let text = [
            Self.oldHeader,
            Self.oldRow(["Name": "Corin Vale", "Birthday": "1604-08-21"]),
            Self.oldRow(["Name": "Nell Vale", "Birthday": "0000-02-29"]),
        ].joined(separator: "\n")
        let cards = try Self.cards(text)
        #expect(cards.count == 2)
        #expect(cards[0].birthday == Birthday(month: 8, day: 21))
        #expect(cards[0].birthday?.year == nil)
        #expect(cards[1].birthday == Birthday(month: 2, day: 29))
    }

    @Test func futureBirthdayKeepsCardWithoutIt() throws {
        let text = [
            Self.oldHeader,
            Self.oldRow(["Name": "Future Typo", "Birthday": "2090-01-06"]),
            Self.oldRow(["Name": "Year Less", "Birthday": "--01-06"]),
            Self.oldRow(["Name": "Born Today", "Birthday": "2026-11-23"]),
        ].joined(separator: "\n")
        var entries: [ImportEntry] = []
        try GoogleContactsCSV.parse(text, today: LocalDate(year: 2026, month: 11, day: 23)) { entries.append($0) }
        guard entries.count == 3, case .card(let future, let problems) = entries[0],
              case .card(let yearLess, let none) = entries[1], case .card(let today, let alsoNone) = entries[2] else {
            Issue.record("expected three cards: \(entries)")
            return
        }
        #expect(future.birthday == nil)
        #expect(problems.map(\.description) == ["card 1: Birthday 2090-01-06 is in the future (today is 2026-11-23)"])
        #expect(yearLess.birthday != nil && none.isEmpty)
        #expect(today.birthday?.year == 2026 && alsoNone.isEmpty)
    }

    @Test func impossibleBirthdayKeepsCardWithProblem() throws {
        let text = [
            Self.oldHeader,
            Self.oldRow(["Name": "Juniper Slate", "Birthday": "1990-02-30"]),
            Self.oldRow(["Name": "Kit Marrow", "Birthday": "--13-01"]),
            Self.oldRow(["Name": "Lale Ostrow", "Birthday": "March 3rd"]),
        ].joined(separator: "\n")
        let entries = try Self.entries(text)
        #expect(entries.count == 3)
        let expected = [
            ("Juniper Slate", 1, "Birthday \"1990-02-30\" is not a date"),
            ("Kit Marrow", 2, "Birthday \"--13-01\" is not a date"),
            ("Lale Ostrow", 3, "Birthday \"March 3rd\" is not a date"),
        ]
        for (entry, (name, row, message)) in zip(entries, expected) {
            guard case .card(let card, let problems) = entry else {
                Issue.record("row \(row) was skipped")
                continue
            }
            #expect(card.name == name)
            #expect(card.birthday == nil)
            #expect(problems == [CardProblem(cardNumber: row, message: message)])
        }
    }

    @Test func multipleEmailsAndPreferredMarker() throws {
        let text = [
            Self.oldHeader,
            Self.oldRow(["Name": "Ysolde Graff",
                         "E-mail 1 - Type": "* Home", "E-mail 1 - Value": "ysolde@example.org ::: yg@example.net",
                         "E-mail 2 - Type": "Work", "E-mail 2 - Value": "y.graff@example.com",
                         "Phone 1 - Type": "Mobile", "Phone 1 - Value": "555-0110 ::: 555-0111"]),
        ].joined(separator: "\n")
        let cards = try Self.cards(text)
        #expect(cards.count == 1)
        #expect(cards[0].emails == [
            Email(address: "ysolde@example.org", preferred: true),
            Email(address: "yg@example.net", preferred: false),
            Email(address: "y.graff@example.com", preferred: false),
        ])
        #expect(cards[0].phones == [Phone(number: "555-0110", kind: .cell),
                                    Phone(number: "555-0111", kind: .cell)])
        #expect(cards[0].id == ContactIdentity.derivedID(name: "Ysolde Graff", firstEmail: "ysolde@example.org",
                                                         firstPhone: "555-0110"))

        let newText = Self.newHeader + "\n"
            + Self.newRow(["First Name": "Zeb", "E-mail 1 - Label": "Other",
                           "E-mail 1 - Value": "zeb@example.org", "E-mail 2 - Label": "* Work",
                           "E-mail 2 - Value": "zeb@example.com"])
        let newCards = try Self.cards(newText)
        #expect(newCards.first?.emails == [Email(address: "zeb@example.org"),
                                           Email(address: "zeb@example.com", preferred: true)])
    }

    @Test func labelsBecomeCategoriesWithoutMyContacts() throws {
        let oldText = Self.oldHeader + "\n"
            + Self.oldRow(["Name": "Aurel Penn", "Group Membership": "* myContacts ::: * Family ::: Book Club"])
        #expect(try Self.cards(oldText).first?.categories == ["Family", "Book Club"])

        let newText = Self.newHeader + "\n"
            + Self.newRow(["First Name": "Aurel", "Labels": "myContacts ::: Work Friends ::: * myContacts"])
        #expect(try Self.cards(newText).first?.categories == ["Work Friends"])
    }

    @Test func nonGoogleHeaderThrows() throws {
        let vcard = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Nobody\r\nEND:VCARD\r\n"
        let outlook = "First Name,Middle Name,Last Name,Title,Suffix,E-mail Address,Mobile Phone,Birthday,Categories\n"
        for text in [vcard, outlook, "a,b,c\n1,2,3\n", ""] {
            #expect(throws: GoogleContactsCSV.Error.self) { try Self.entries(text) }
        }
        do {
            _ = try Self.entries("a,b,c\n1,2,3\n")
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("not a Google Contacts CSV header"))
        }
        #expect(!GoogleContactsCSV.looksLikeHeader("BEGIN:VCARD"))
        #expect(!GoogleContactsCSV.looksLikeHeader(outlook))
        #expect(GoogleContactsCSV.looksLikeHeader(Self.oldHeader))
        #expect(GoogleContactsCSV.looksLikeHeader(Self.newHeader))
    }

    @Test func emptyRowSkipped() throws {
        let text = [
            Self.oldHeader,
            Self.oldRow(["Name": "Bram Ellery", "Birthday": "1988-10-10"]),
            Self.oldRow([:]),
            Self.oldRow(["Group Membership": "* myContacts", "Organization 1 - Name": "Acme Widgets"]),
            Self.oldRow(["Name": "Cass Ellery"]),
        ].joined(separator: "\n") + "\n\n"
        let entries = try Self.entries(text)
        #expect(entries.count == 4)
        guard entries.count == 4 else { return }
        if case .skipped(let problem) = entries[1] {
            #expect(problem == CardProblem(cardNumber: 2, message: "empty row"))
        } else {
            Issue.record("row 2 not skipped")
        }
        if case .skipped(let problem) = entries[2] {
            #expect(problem.cardNumber == 3)
        } else {
            Issue.record("row 3 not skipped")
        }
        if case .card(let card, _) = entries[3] {
            #expect(card.name == "Cass Ellery")
        } else {
            Issue.record("row 4 skipped")
        }
    }

    @Test func nameFallbacksWhenNameIsEmpty() throws {
        let text = [
            Self.newHeader,
            Self.newRow(["Organization Name": "Quillfeather Ltd", "Phone 1 - Label": "Work",
                         "Phone 1 - Value": "555-0170"]),
            Self.newRow(["E-mail 1 - Value": "solo@example.org"]),
            Self.newRow(["Birthday": "--07-04"]),
        ].joined(separator: "\n")
        let cards = try Self.cards(text)
        #expect(cards.count == 3)
        #expect(cards[0].name == "Quillfeather Ltd")
        #expect(cards[0].id == ContactIdentity.derivedID(name: "", firstEmail: nil, firstPhone: "555-0170"))
        #expect(cards[1].name == "solo@example.org")
        let unknownID = ContactIdentity.derivedID(name: "", firstEmail: nil, firstPhone: nil)
        #expect(cards[2].id == unknownID)
        #expect(cards[2].name == ContactIdentity.unknownName(id: unknownID))
        #expect(cards[2].birthday == Birthday(month: 7, day: 4))
    }

    @Test func shortAndLongRowsArePaddedOrTrimmed() throws {
        let text = "First Name,Last Name,Birthday,Labels,E-mail 1 - Label,E-mail 1 - Value\n"
            + "Odile,Marsh\n"
            + "Pell,Hart,1970-05-05,,,pell@example.org,extra,more\n"
        let entries = try Self.entries(text)
        #expect(entries.count == 2)
        let cards = try Self.cards(text)
        #expect(cards.map(\.name) == ["Odile Marsh", "Pell Hart"])
        #expect(cards[1].emails == [Email(address: "pell@example.org")])
        #expect(cards[1].birthday == Birthday(month: 5, day: 5, year: 1970))
    }

    @Test func tenThousandRowsParse() throws {
        var lines = [Self.newHeader]
        for index in 0..<10_000 {
            lines.append(Self.newRow(["First Name": "Person\(index)", "Last Name": "Sample",
                                      "Birthday": "--0\(index % 9 + 1)-1\(index % 9)",
                                      "E-mail 1 - Value": "p\(index)@example.org"]))
        }
        var count = 0
        try GoogleContactsCSV.parse(lines.joined(separator: "\n")) { entry in
            if case .card(let card, let problems) = entry, card.birthday != nil, problems.isEmpty { count += 1 }
        }
        #expect(count == 10_000)
    }
}
