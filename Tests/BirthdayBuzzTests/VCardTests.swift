import Foundation
import Testing
@testable import BirthdayBuzz

/// Reads a vCard text and returns its entries.
func readCards(_ text: String) -> [ImportEntry] {
    var entries: [ImportEntry] = []
    VCardReader.parse(text) { entries.append($0) }
    return entries
}

func cards(_ text: String) -> [ContactCard] {
    readCards(text).compactMap { if case .card(let card, _) = $0 { return card } else { return nil } }
}

func card(bday line: String) -> ContactCard? {
    cards("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:x\r\nFN:Test\r\n\(line)\r\nEND:VCARD\r\n").first
}

@Suite struct VCardTests {
    @Test(arguments: [
        ("BDAY:1990-03-15", "1990-03-15"),
        ("BDAY:19900315", "1990-03-15"),
        ("BDAY:--0315", "--03-15"),
        ("BDAY:--03-15", "--03-15"),
        ("BDAY:1990-03-15T00:00:00Z", "1990-03-15"),
        ("BDAY:19531015T231000Z", "1953-10-15"),
        ("BDAY;VALUE=date:1980-05-21", "1980-05-21"),
        ("BDAY;X-APPLE-OMIT-YEAR=1604:1604-03-15", "--03-15"),
        ("BDAY:1604-03-15", "--03-15"),
        ("BDAY:16040101", "--01-01"),
        // khard's "year unknown" (issue 10 point 15), like 1604 and 0000.
        ("BDAY:1900-10-11", "--10-11"),
        ("BDAY:19001011", "--10-11"),
        ("BDAY:0000-10-11", "--10-11"),
        ("BDAY:1901-10-11", "1901-10-11"),
        ("BDAY;X-APPLE-OMIT-YEAR=1604:1604-02-29", "--02-29"),
        ("BDAY:--0229", "--02-29"),
        ("bday:1990-03-15", "1990-03-15"),
        ("item1.BDAY:1990-03-15", "1990-03-15"),
        ("BDAY: 1990-03-15 ", "1990-03-15"),
        ("BDAY:2000-02-29", "2000-02-29"),
        // Next to the four common forms (read in place), the general reading.
        ("BDAY:1990-03-15t10:00", "1990-03-15"),
        ("BDAY:19900315T", "1990-03-15"),
        ("BDAY:1990-3-5", "1990-03-05"),
        ("BDAY:--0315T1000", "--03-15"),
        ("BDAY:--3-15", nil),
        ("BDAY:1990-03-15x", nil),
        ("BDAY:199003150", nil),
        ("BDAY:--03150", nil),
    ] as [(String, String?)])
    func bdayForms(_ line: String, _ expected: String?) throws {
        let parsed = try #require(card(bday: line))
        #expect(parsed.birthday?.description == expected)
    }

    @Test(arguments: ["BDAY:", "BDAY: ", "BDAY;VALUE=date:"])
    func emptyBdayIsNoBirthday(_ line: String) throws {
        let entries = readCards("BEGIN:VCARD\nVERSION:3.0\nFN:E\n\(line)\nEND:VCARD\n")
        guard case .card(let parsed, let problems) = try #require(entries.first) else {
            Issue.record("skipped"); return
        }
        #expect(parsed.birthday == nil)
        #expect(problems.isEmpty)
    }

    @Test func textBdayIsANote() throws {
        let parsed = try #require(card(bday: "BDAY;VALUE=text:circa 1800"))
        #expect(parsed.birthday == nil)
        #expect(parsed.birthdayText == "circa 1800")
    }

    @Test(arguments: ["BDAY:1990-02-30", "BDAY:1990-13-01", "BDAY:1901-02-29", "BDAY:--0230", "BDAY:tomorrow",
                      "BDAY:1990-03", "BDAY;CALSCALE=klingon:19900101"])
    func impossibleDatesAreReportedAndTheCardKept(_ line: String) throws {
        let entries = readCards("BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:1\r\nFN:Bad Date\r\n\(line)\r\nEND:VCARD\r\n")
        guard case .card(let parsed, let problems) = try #require(entries.first) else {
            Issue.record("card was skipped"); return
        }
        #expect(parsed.birthday == nil)
        #expect(parsed.name == "Bad Date")
        let problem = try #require(problems.first)
        #expect(problem.cardNumber == 1)
        #expect(problem.uid == "urn:uuid:1")
        #expect(problem.description.hasPrefix("card 1 (UID urn:uuid:1): "))
    }

    @Test func calscaleIsRead() throws {
        let parsed = try #require(card(bday: "BDAY;CALSCALE=hebrew:19950410"))
        #expect(parsed.birthday?.calendar == .hebrew)
        let alt = try #require(cards("BEGIN:VCARD\nFN:A\nX-ALTBDAY;CALSCALE=chinese:19880620\nEND:VCARD\n").first)
        #expect(alt.birthday?.calendar == .chinese)
    }

    @Test func anniversaries() throws {
        for property in ["ANNIVERSARY", "X-ANNIVERSARY", "X-EVOLUTION-ANNIVERSARY", "X-MS-ANNIVERSARY"] {
            let parsed = try #require(card(bday: "\(property):20110113"))
            #expect(parsed.anniversary?.description == "2011-01-13", "\(property)")
            #expect(parsed.birthday == nil)
        }
    }

    @Test func foldedLinesCRLFAndLF() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Very Long\r\n  Name Here\r\nNOTE:x\r\n\tmore\r\nBDAY:1990-\r\n 03-15\r\nEND:VCARD\r\n"
        let parsed = try #require(cards(text).first)
        #expect(parsed.name == "Very Long Name Here")
        #expect(parsed.birthday?.description == "1990-03-15")
        let lf = try #require(cards(text.replacingOccurrences(of: "\r\n", with: "\n")).first)
        #expect(lf.name == parsed.name)
    }

    @Test func quotedPrintableSoftBreaksAndCharset() throws {
        let text = """
            BEGIN:VCARD
            VERSION:2.1
            N;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Garc=C3=ADa;Mar=
            =C3=ADa;;;
            FN;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:J=F6rg M=FC=
            ller
            NOTE;ENCODING=QUOTED-PRINTABLE:line one=0D=0A=
            line two
            TEL;CELL;PREF:+49 170 1
            BDAY:19781124
            END:VCARD

            """
        let parsed = try #require(cards(text).first)
        #expect(parsed.name == "Jörg Müller")
        #expect(parsed.firstName == "María")
        #expect(parsed.phones == [Phone(number: "+49 170 1", kind: .cell, preferred: true)])
        #expect(parsed.birthday?.description == "1978-11-24")
    }

    @Test func escapedCommasInCategories() throws {
        let parsed = try #require(cards("BEGIN:VCARD\nFN:C\nCATEGORIES:Family,Friends\\, close,Work\nEND:VCARD\n").first)
        #expect(parsed.categories == ["Family", "Friends, close", "Work"])
    }

    @Test func bomAndLowercaseNames() throws {
        let text = "\u{FEFF}begin:vcard\nversion:3.0\nuid:abc\nfn:Lower Case\nbday:1990-03-15\nemail;type=pref:l@example.org\nend:vcard\n"
        let parsed = try #require(cards(text).first)
        #expect(parsed.id == "abc")
        #expect(parsed.name == "Lower Case")
        #expect(parsed.birthday?.description == "1990-03-15")
        #expect(parsed.emails == [Email(address: "l@example.org", preferred: true)])
    }

    /// CR, LF and CRLF each end a line, in any mix, and a folded line
    /// continues after any of them (a CR-only or mixed card was one long line,
    /// so its UID was lost and a second contact appeared after a write-back).
    @Test(arguments: ["\r\n", "\n", "\r"])
    func everyLineEndEndsALine(eol: String) throws {
        let text = ["BEGIN:VCARD", "VERSION:3.0", "UID:u1", "FN:Ann", "  Lee", "BDAY:1990-05-17", "END:VCARD",
                    "BEGIN:VCARD", "UID:u2", "FN:Bob", "END:VCARD", ""].joined(separator: eol)
        let parsed = cards(text)
        #expect(parsed.map(\.id) == ["u1", "u2"])
        #expect(parsed.first?.name == "Ann Lee")
        #expect(parsed.first?.birthday?.description == "1990-05-17")
    }

    @Test func mixedLineEndsKeepTheUIDAndMakeOneContact() throws {
        let text = "BEGIN:VCARD\r\nVERSION:3.0\nUID:u1\rFN:Ann\r\nBDAY:1991-06-18\rNOTE:a\n b\r\nEND:VCARD\n"
        let entries = readCards(text)
        #expect(entries.count == 1)
        let parsed = try #require(cards(text).first)
        #expect(parsed.id == "u1" && parsed.hasUID)
        #expect(parsed.name == "Ann")
        #expect(parsed.birthday?.description == "1991-06-18")
    }

    /// Cards joined with `cat`, each file with its BOM: the BOM before the second card is skipped too.
    @Test func aByteOrderMarkBeforeACardInTheMiddleOfAFile() throws {
        let one = "\u{FEFF}BEGIN:VCARD\r\nUID:u1\r\nFN:Ann\r\nEND:VCARD\r\n"
        let two = "\u{FEFF}BEGIN:VCARD\r\nUID:u2\r\nFN:Bob\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n"
        #expect(cards(one + two).map(\.id) == ["u1", "u2"])
        #expect(cards(one + two).last?.birthday?.description == "1990-05-17")
    }

    /// A CRLF cut between two chunks is one line end, not a line end and an empty line.
    @Test(arguments: [1, 2, 3, 5, 7])
    func lineEndsAcrossChunksReadAlike(chunk: Int) throws {
        let text = "\u{FEFF}BEGIN:VCARD\r\nVERSION:2.1\rUID:u1\nFN;ENCODING=QUOTED-PRINTABLE:Ren=C3=\r\n=A9e\r\nNOTE:x\r\n y\r"
            + "BDAY:19900315\r\nEND:VCARD\rBEGIN:VCARD\nFN:B\r\n C\r\nEND:VCARD"
        let whole = readCards(text).map { String(describing: $0) }
        var reader = VCardReader()
        var pieces: [String] = []
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            Array(bytes[offset..<end]).withUnsafeBytes { reader.feed($0) { pieces.append(String(describing: $0)) } }
            offset = end
        }
        reader.finish { pieces.append(String(describing: $0)) }
        #expect(pieces == whole)
        #expect(cards(text).map(\.name) == ["Renée", "BC"])
    }

    @Test func controlCharactersInNamesBecomeSpaces() throws {
        let text = "BEGIN:VCARD\nVERSION:3.0\nFN:Eve\\r\\nBcc: evil@example.org\rX\nN:Eve\\nil;Bob\u{7}by;;;\nEND:VCARD\n"
        let parsed = try #require(cards(text).first)
        #expect(!parsed.name.contains("\n") && !parsed.name.contains("\r"))
        // `\r` is no vCard escape (the backslash goes), `\n` is a newline; a raw CR ends
        // the line (as an XML parser would make it), so `X` is a line of its own, not a property.
        #expect(parsed.name == "Ever Bcc: evil@example.org")
        #expect(parsed.firstName == "Bob by")
    }

    @Test func truncatedCardDoesNotSwallowTheNext() throws {
        let text = """
            BEGIN:VCARD
            VERSION:3.0
            UID:first
            FN:Cut Off
            BEGIN:VCARD
            VERSION:3.0
            UID:second
            FN:Whole
            BDAY:1990-03-15
            END:VCARD
            BEGIN:VCARD
            UID:third
            FN:Ends Early

            """
        let entries = readCards(text)
        #expect(entries.count == 3)
        guard entries.count == 3 else { return }
        guard case .skipped(let first) = entries[0] else { Issue.record("first not skipped"); return }
        #expect(first.uid == "first")
        #expect(first.cardNumber == 1)
        guard case .card(let second, _) = entries[1] else { Issue.record("second not read"); return }
        #expect(second.id == "second")
        #expect(second.birthday?.description == "1990-03-15")
        guard case .skipped(let third) = entries[2] else { Issue.record("third not skipped"); return }
        #expect(third.cardNumber == 3)
        #expect(third.message.contains("truncated"))
    }

    @Test func photosAreDroppedAndAgentsNested() throws {
        let photo = String(repeating: "QUJDRA==", count: 2_000)
        let text = """
            BEGIN:VCARD
            VERSION:2.1
            FN:Has Photo
            PHOTO;ENCODING=BASE64;TYPE=JPEG:
            \(photo)
            \(photo)

            AGENT:
            BEGIN:VCARD
            FN:The Agent
            END:VCARD
            BDAY:1990-03-15
            END:VCARD
            BEGIN:VCARD
            VERSION:3.0
            FN:Folded Photo
            PHOTO;ENCODING=b;TYPE=JPEG:\(photo)
             \(photo)
            BDAY:--0315
            END:VCARD

            """
        let parsed = cards(text)
        #expect(parsed.map(\.name) == ["Has Photo", "Folded Photo"])
        #expect(parsed.first?.birthday?.description == "1990-03-15")
        #expect(parsed.last?.birthday?.description == "--03-15")
    }

    @Test func chunkBoundariesDoNotMatter() throws {
        let text = "\u{FEFF}BEGIN:VCARD\r\nVERSION:2.1\r\nFN;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Ren=C3=\r\n=A9e\r\nBDAY:19900315\r\nTEL;CELL:1\r\nEND:VCARD\r\nBEGIN:VCARD\r\nFN:B\r\n C\r\nEND:VCARD\r\n"
        let whole = cards(text)
        var reader = VCardReader()
        var pieces: [ContactCard] = []
        for byte in Array(text.utf8) {
            [byte].withUnsafeBytes { reader.feed($0) { if case .card(let c, _) = $0 { pieces.append(c) } } }
        }
        reader.finish { if case .card(let c, _) = $0 { pieces.append(c) } }
        #expect(whole.map(\.name) == ["Renée", "BC"])
        #expect(pieces == whole)
    }

    @Test func identityWithoutUID() throws {
        let a = try #require(cards("BEGIN:VCARD\nFN:  Jane   DOE \nEMAIL:Jane@Example.org\nEND:VCARD\n").first)
        let b = try #require(cards("BEGIN:VCARD\nFN:jane doe\nEMAIL:jane@example.org\nEND:VCARD\n").first)
        #expect(a.id == b.id)
        #expect(a.id.hasPrefix("h-") && a.id.count == 18)
        #expect(!a.hasUID)
        // The id is SHA-256("jane doe\0jane@example.org"), first 16 hex digits.
        #expect(a.id == "h-67eedbfc331af5c4")  // stored ids: pinned, checked with Python's hashlib
        let phoneOnly = try #require(cards("BEGIN:VCARD\nFN:Jane Doe\nTEL:+1 (555) 0100\nEND:VCARD\n").first)
        #expect(phoneOnly.id == "h-c491dbeb4b0d3f4e")
        let nameless = try #require(cards("BEGIN:VCARD\nVERSION:3.0\nORG:Acme\nEND:VCARD\n").first)
        #expect(nameless.name.hasPrefix("Unknown Contact "))
        let fromN = try #require(cards("BEGIN:VCARD\nN:Doe;John;Q;Dr.;Jr.\nEND:VCARD\n").first)
        #expect(fromN.name == "Dr. John Q Doe Jr.")
        #expect(fromN.firstName == "John")
    }

    @Test func sha256AroundThePaddingBoundary() {
        // One and two padding blocks: lengths next to 56 and 64 bytes mod 64.
        let expected = [
            55: "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072",
            56: "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e",
            63: "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2",
            64: "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c",
            119: "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c",
            120: "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98",
        ]
        for (count, digest) in expected {
            #expect(SHA256.hex([UInt8](repeating: 0x78, count: count)) == digest, "\(count) bytes")
        }
    }

    /// The rule `normalizedName` implements, written the plain way.
    private static func referenceNormalizedName(_ name: String) -> String {
        var out = ""
        var pendingSpace = false
        for scalar in name.lowercased().unicodeScalars {
            if scalar == " " || (scalar.value >= 0x09 && scalar.value <= 0x0D) || scalar.value == 0xA0 {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.unicodeScalars.append(" ") }
                pendingSpace = false
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    @Test(arguments: [
        "Jane DOE", "  Jane\t\tDoe \n", "ÀÉÎÕÜ Ø Þ × ß ÿ µ", "José\u{A0}\u{A0}GARCÍA\u{A0}", "ÄÖÜ straße",
        "ΟΔΥΣΣΕΥΣ", "Ǆemal İnce", "ДМИТРИЙ Ёлкин", "e\u{301}E\u{301}", "Zoë\u{A0}O'Brien", "\u{A0}", "", "Å\u{A0}b",
    ])
    func normalizedNameLowercasesAndCollapses(_ name: String) {
        #expect(ContactIdentity.normalizedName(name) == VCardTests.referenceNormalizedName(name))
    }

    @Test func invalidUTF8IsReadAsWindows1252() throws {
        // "Ren\xE9e" (Latin-1 bytes, no CHARSET) and a valid UTF-8 name side by side.
        var bytes = Array("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ren".utf8) + [0xE9] + Array("e\r\nEND:VCARD\r\n".utf8)
        bytes += Array("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Renée\r\nEND:VCARD\r\n".utf8)
        var reader = VCardReader()
        var names: [String] = []
        bytes.withUnsafeBytes { reader.feed($0) { if case .card(let c, _) = $0 { names.append(c.name) } } }
        reader.finish { if case .card(let c, _) = $0 { names.append(c.name) } }
        #expect(names == ["Renée", "Renée"])
    }

    @Test func propertyNamesAreClassifiedInAnyCase() {
        let expected: [(String, PropertyName)] = [
            ("BEGIN", .begin), ("END", .end), ("VERSION", .version), ("UID", .uid), ("FN", .fn), ("N", .n),
            ("BDAY", .bday), ("X-ALTBDAY", .altBday), ("ANNIVERSARY", .anniversary), ("X-ANNIVERSARY", .anniversary),
            ("X-EVOLUTION-ANNIVERSARY", .anniversary), ("X-MS-ANNIVERSARY", .anniversary),
            ("X-KADDRESSBOOK-X-ANNIVERSARY", .anniversary), ("TEL", .tel), ("EMAIL", .email),
            ("CATEGORIES", .categories), ("LANG", .lang), ("AGENT", .agent), ("PHOTO", .dropped), ("LOGO", .dropped),
            ("SOUND", .dropped), ("KEY", .dropped),
            ("", .other), ("X", .other), ("NOTE", .other), ("ADR", .other), ("ORG", .other), ("BDAYS", .other),
            ("X-ALTBDAX", .other), ("CATEGORIEZ", .other), ("X-MS-ANNIVERSARX", .other), ("FNN", .other),
        ]
        for (name, kind) in expected {
            for form in [name, name.lowercased(), name.prefix(1).lowercased() + name.dropFirst()] {
                let bytes = Array(form.utf8)
                #expect(bytes.withUnsafeBufferPointer(PropertyName.classify) == kind, "\(form)")
            }
        }
    }

    @Test func sha256KnownVectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array(String(repeating: "a", count: 1_000).utf8))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func phonesAndEmailsKeepTypesAndPreference() throws {
        let text = """
            BEGIN:VCARD
            VERSION:4.0
            FN:Multi
            TEL;VALUE=uri;TYPE="cell,voice";PREF=1:tel:+1-555-0100
            TEL;TYPE=home:+1 555 0101
            item2.TEL;TYPE=WORK:+1 555 0102
            EMAIL;PREF=2:b@example.org
            EMAIL;PREF=1:a@example.org
            LANG;PREF=2:en
            LANG;PREF=1:de-AT
            END:VCARD

            """
        let parsed = try #require(cards(text).first)
        #expect(parsed.phones.map(\.kind) == [.cell, .home, .work])
        #expect(parsed.phones.first?.number == "+1-555-0100")
        #expect(parsed.phones.first?.preferred == true)
        #expect(parsed.emails.map(\.preferred) == [true, true])
        #expect(parsed.language == "de-AT")
    }

    @Test func telAndMailtoPrefixesAreDroppedInAnyCase() throws {
        let text = "BEGIN:VCARD\nFN:P\nTEL:Tel:+1 555\nTEL:TEL:\nTEL:tel\nEMAIL:mailto:a@example.org\n"
            + "EMAIL:MAILTO:\nEMAIL:Mailto:b@example.org\nEMAIL:mail:c@example.org\nEND:VCARD\n"
        let parsed = try #require(cards(text).first)
        // A prefix with nothing after it is kept as the value.
        #expect(parsed.phones.map(\.number) == ["+1 555", "TEL:", "tel"])
        #expect(parsed.emails.map(\.address) == ["a@example.org", "MAILTO:", "b@example.org", "mail:c@example.org"])
    }

    @Test func oversizedCardIsSkipped() {
        var reader = VCardReader(maxLineBytes: 100, maxCardBytes: 1_000)
        var entries: [ImportEntry] = []
        let text = "BEGIN:VCARD\nFN:Big\nNOTE:\(String(repeating: "x", count: 500))\nEMAIL:\(String(repeating: "y", count: 500))\nEND:VCARD\nBEGIN:VCARD\nFN:Small\nEND:VCARD\n"
        Array(text.utf8).withUnsafeBytes { reader.feed($0) { entries.append($0) } }
        reader.finish { entries.append($0) }
        #expect(entries.count == 2)
        if case .skipped(let problem) = entries.first { #expect(problem.message.contains("longer")) } else { Issue.record("not skipped") }
        if case .card(let c, _) = entries.last { #expect(c.name == "Small") } else { Issue.record("small lost") }
    }

    // MARK: - Issue 10, points 13 and 15

    /// Reads `text` fed in chunks of `chunk` bytes (the reader's carry-over path).
    private func chunked(_ text: String, chunk: Int, reader: VCardReader = VCardReader()) -> [ImportEntry] {
        var reader = reader
        var entries: [ImportEntry] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            bytes[start..<end].withUnsafeBytes { reader.feed($0) { entries.append($0) } }
            start = end
        }
        reader.finish { entries.append($0) }
        return entries
    }

    /// Radicale rewrites cards through vobject, which never folds PHOTO: a photo
    /// on one line over the line bound must not drop the contact, whatever came
    /// before it (the bound is checked against the property the line belongs to).
    @Test func photoOnOneLineOverTheBoundKeepsTheContact() throws {
        let photo = String(repeating: "QUJDRA==", count: (1 << 20) / 8 + 4_096)  // > 1 MiB, one line
        let text = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:p1\r\nFN:Pia Photo\r\nPHOTO;ENCODING=b;TYPE=JPEG:\(photo)\r\n"
            + "BDAY:1980-05-21\r\nEND:VCARD\r\n"
            + "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:p2\r\nPHOTO;ENCODING=b;TYPE=JPEG:\(photo)\r\nFN:Next\r\n"
            + "NOTE:\(photo)\r\nEND:VCARD\r\n"
        for chunk in [1 << 16, 1 << 22] {
            let entries = chunked(text, chunk: chunk)
            let kept = entries.compactMap { if case .card(let c, _) = $0 { return c } else { return nil } }
            #expect(kept.map(\.name) == ["Pia Photo", "Next"], "chunk \(chunk): \(entries)")
            #expect(kept.first?.birthday?.description == "1980-05-21")
        }
        // A kept property over the bound still skips its card (the bound protects memory).
        var small = VCardReader(maxLineBytes: 100, maxCardBytes: 10_000)
        small.today = nil
        let long = "BEGIN:VCARD\nFN:A\nPHOTO:\(String(repeating: "p", count: 500))\nFN:\(String(repeating: "f", count: 500))\nEND:VCARD\n"
        let entries = chunked(long, chunk: 64, reader: small)
        guard case .skipped(let problem) = try #require(entries.first) else { Issue.record("kept"); return }
        #expect(problem.message.contains("longer than 100"))
    }

    /// RFC 6350 §3.2 allows a fold anywhere, also inside the name.
    @Test(arguments: ["BD\r\n AY:1971-10-11", "B\r\n DAY\r\n :1971-10-11", "BDAY\r\n ;VALUE=date:1971-10-11",
                      "item1.BD\r\n\tAY:1971-10-11", "bd\n ay:19711011"])
    func foldInsideThePropertyName(_ line: String) throws {
        let text = "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:f1\r\nF\r\n N:Folded Name\r\n\(line)\r\nEND:VCARD\r\n"
        for chunk in [1, 3, 1_000] {
            let kept = chunked(text, chunk: chunk).compactMap { if case .card(let c, _) = $0 { return c } else { return nil } }
            #expect(kept.first?.name == "Folded Name", "\(chunk)")
            #expect(kept.first?.birthday?.description == "1971-10-11", "\(chunk)")
        }
        // A folded BEGIN and END still open and close the card.
        let wrapped = cards("BEG\r\n IN:VCARD\r\nFN:W\r\nBDAY:--0101\r\nEN\r\n D:VCARD\r\n")
        #expect(wrapped.map(\.name) == ["W"])
    }

    @Test func groupCardsAreMarkedAsGroups() throws {
        let text = """
            BEGIN:VCARD
            VERSION:4.0
            UID:g1
            KIND:group
            FN:Family
            MEMBER:urn:uuid:p1
            END:VCARD
            BEGIN:VCARD
            VERSION:3.0
            UID:g2
            X-ADDRESSBOOKSERVER-KIND:GROUP
            FN:Book Club
            END:VCARD
            BEGIN:VCARD
            VERSION:4.0
            UID:p1
            kind:individual
            FN:Person
            END:VCARD
            BEGIN:VCARD
            VERSION:3.0
            UID:p2
            FN:Plain
            END:VCARD

            """
        let parsed = cards(text)
        #expect(parsed.map(\.isGroup) == [true, true, false, false])
    }

    /// Apple's anniversary: `itemN.X-ABDATE` whose `itemN.X-ABLabel` is `_$!<Anniversary>!$_`,
    /// the label before or after the date; other labelled dates are not anniversaries.
    @Test func appleAnniversaryIsRead() throws {
        func anniversary(_ lines: [String]) throws -> String? {
            let text = (["BEGIN:VCARD", "VERSION:3.0", "FN:Apple"] + lines + ["END:VCARD", ""]).joined(separator: "\r\n")
            return try #require(cards(text).first).anniversary?.description
        }
        #expect(try anniversary(["item1.X-ABDATE:1975-03-01", "item1.X-ABLabel:_$!<Anniversary>!$_"]) == "1975-03-01")
        #expect(try anniversary(["item2.X-ABLabel:_$!<Anniversary>!$_", "item1.X-ABDATE:2000-01-01",
                                 "item1.X-ABLabel:_$!<Other>!$_", "ITEM2.X-ABDATE;type=pref:2004-06-12"]) == "2004-06-12")
        #expect(try anniversary(["item3.X-ABDATE;X-APPLE-OMIT-YEAR=1604:1604-06-12",
                                 "item3.X-ABLabel:_$!<anniversary>!$_"]) == "--06-12")
        #expect(try anniversary(["item1.X-ABDATE:1975-03-01", "item1.X-ABLabel:Wedding"]) == nil)
        #expect(try anniversary(["X-ABDATE:1975-03-01", "X-ABLabel:_$!<Anniversary>!$_"]) == nil)
        // The standard property wins.
        #expect(try anniversary(["ANNIVERSARY:1990-09-09", "item1.X-ABDATE:1975-03-01",
                                 "item1.X-ABLabel:_$!<Anniversary>!$_"]) == "1990-09-09")
    }

    /// BiDi overrides and isolates would reorder what is shown around a name.
    @Test func bidiControlsAreStrippedFromNames() throws {
        let controls = ["\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}",
                        "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}"]
        for control in controls {
            let text = "BEGIN:VCARD\nFN:\(control)Eve\(control) Evil\(control)\nN:Evil\(control);Eve;;;\nEND:VCARD\n"
            let parsed = try #require(cards(text).first)
            #expect(parsed.name == "Eve Evil", "U+\(String(control.unicodeScalars.first!.value, radix: 16))")
            #expect(parsed.firstName == "Eve")
        }
        let fromN = try #require(cards("BEGIN:VCARD\nN:Do\u{202E}e;Jo\u{2067}hn;;;\nEND:VCARD\n").first)
        #expect(fromN.name == "John Doe")
        // Other right-to-left text stays as it is.
        #expect(try #require(cards("BEGIN:VCARD\nFN:\u{5D3}\u{5E0}\u{5D4} \u{200F}x\nEND:VCARD\n").first).name
                == "\u{5D3}\u{5E0}\u{5D4} \u{200F}x")
    }
}

/// RFC 6474 DEATHDATE (a date, a date-time or text) and X-DEATHDATE: any value
/// makes the contact deceased; a date is kept as a date, anything else as text.
@Suite struct DeathDateTests {
    static func read(_ line: String) -> ContactCard? {
        cards("BEGIN:VCARD\nVERSION:4.0\nUID:u1\nFN:Dana Scully\nBDAY:1964-02-23\n\(line)\nEND:VCARD\n").first
    }

    @Test(arguments: [
        ("DEATHDATE:2024-01-03", "2024-01-03", nil),
        ("DEATHDATE:20240103T101500Z", "2024-01-03", nil),
        ("deathdate:--0103", "--01-03", nil),
        ("X-DEATHDATE:2024-01-03", "2024-01-03", nil),
        ("item1.X-DEATHDATE:2024-01-03", "2024-01-03", nil),
        ("DEATHDATE;VALUE=text:circa 1800", nil, "circa 1800"),
        ("DEATHDATE:sometime in May", nil, "sometime in May"),
    ] as [(String, String?, String?)])
    func deathDateForms(_ line: String, _ date: String?, _ text: String?) throws {
        let card = try #require(Self.read(line))
        #expect(card.deathDate?.description == date)
        #expect(card.deathText == text)
        #expect(card.hasDeathDate)
        #expect(card.birthday?.description == "1964-02-23")
    }

    @Test func noOrEmptyDeathDateIsLiving() throws {
        #expect(try #require(Self.read("NOTE:hi")).hasDeathDate == false)
        #expect(try #require(Self.read("DEATHDATE:")).hasDeathDate == false)
    }
}
