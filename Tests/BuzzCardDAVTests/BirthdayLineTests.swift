import BuzzCardDAV
import Foundation
import Testing

/// `replacingBirthday(in:with:)`: the BDAY line changes, no other byte does.
@Suite struct BirthdayLineTests {
    @Test func replacesOnlyTheBirthdayLine() throws {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1990-05-17\r\nX-UNKNOWN;A=b:c\r\nEND:VCARD\r\n"
        #expect(try replacingBirthday(in: card, with: "BDAY:1991-06-18")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1991-06-18\r\nX-UNKNOWN;A=b:c\r\nEND:VCARD\r\n")
    }

    @Test func keepsLineFeedLineEnds() throws {
        let card = "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\nBDAY:--0517\nEND:VCARD\n"
        #expect(try replacingBirthday(in: card, with: "BDAY:1990-05-17") == "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\nBDAY:1990-05-17\nEND:VCARD\n")
    }

    @Test func replacesAFoldedGroupedBirthdayWithParametersWhole() throws {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nitem1.BD\r\n AY;VALUE=date:1990-\r\n 05-17\r\nNOTE:a long note that the server\r\n  folded\r\nEND:VCARD\r\n"
        #expect(try replacingBirthday(in: card, with: "BDAY:2001-02-03")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nBDAY:2001-02-03\r\nNOTE:a long note that the server\r\n  folded\r\nEND:VCARD\r\n")
    }

    @Test func removesTheBirthdayForClearBirthday() throws {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nbday;VALUE=text:circa 1900\r\nFN:Ann\r\nEND:VCARD\r\n"
        #expect(try replacingBirthday(in: card, with: nil) == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nEND:VCARD\r\n")
    }

    @Test func aCardWithoutBirthdayIsLeftAloneByClearAndGetsOneBeforeItsEnd() throws {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nEND:VCARD\r\n"
        #expect(try replacingBirthday(in: card, with: nil) == card)
        #expect(try replacingBirthday(in: card, with: "BDAY:1990-05-17")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n")
        let bare = "BEGIN:VCARD\nFN:Ann\nEND:VCARD"
        #expect(try replacingBirthday(in: bare, with: "BDAY:1990-05-17") == "BEGIN:VCARD\nFN:Ann\nBDAY:1990-05-17\nEND:VCARD")
    }

    @Test func aSecondBirthdayLineGoesAndANestedCardIsUntouched() throws {
        let card = "BEGIN:VCARD\r\nBDAY:1990-05-17\r\nAGENT:\r\nBEGIN:VCARD\r\nBDAY:1950-01-01\r\nEND:VCARD\r\nBDAY:1991-01-01\r\nEND:VCARD\r\n"
        #expect(try replacingBirthday(in: card, with: "BDAY:2000-01-01")
            == "BEGIN:VCARD\r\nBDAY:2000-01-01\r\nAGENT:\r\nBEGIN:VCARD\r\nBDAY:1950-01-01\r\nEND:VCARD\r\nEND:VCARD\r\n")
    }

    @Test func lineBreaksInTheNewValueCannotAddALine() throws {
        let card = "BEGIN:VCARD\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n"
        #expect(try replacingBirthday(in: card, with: "BDAY:2000-01-01\r\nX-EVIL:1")
            == "BEGIN:VCARD\r\nBDAY:2000-01-01X-EVIL:1\r\nEND:VCARD\r\n")
    }

    @Test func aTwoMegabytePhotoComesBackByteIdentical() throws {
        let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJDRA", count: 350_000)
        let before = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Big\r\n" + photo + "\r\nBDAY:1990-05-17\r\nX-ODD:ü\r\nEND:VCARD\r\n"
        #expect(before.utf8.count > 2_000_000)
        let after = try replacingBirthday(in: before, with: "BDAY:1991-06-18")
        #expect(after == before.replacingOccurrences(of: "BDAY:1990-05-17", with: "BDAY:1991-06-18"))
        let cleared = try replacingBirthday(in: before, with: nil)
        #expect(cleared == before.replacingOccurrences(of: "BDAY:1990-05-17\r\n", with: ""))
    }

    // MARK: - Line ends and byte-order marks (issue 18)

    /// `before` with its one `BDAY:1990-05-17` line's text swapped for `line`
    /// (nil: the line and its line end removed), computed on the bytes: what
    /// a write-back may send, and nothing else.
    static func onlyTheBirthdayLineChanged(_ before: String, to line: String?) -> String {
        let bytes = Array(before.utf8)
        let old = Array("BDAY:1990-05-17".utf8)
        let start = (0...(bytes.count - old.count)).first { Array(bytes[$0..<($0 + old.count)]) == old }!
        var end = start + old.count
        guard let line else {
            if end < bytes.count, bytes[end] == 0x0D { end += 1 }
            if end < bytes.count, bytes[end] == 0x0A, end == start + old.count || bytes[end - 1] == 0x0D { end += 1 }
            return String(decoding: bytes[..<start] + bytes[end...], as: UTF8.self)
        }
        return String(decoding: bytes[..<start] + Array(line.utf8) + bytes[end...], as: UTF8.self)
    }

    static let shapes: [(String, String)] = [
        ("CRLF", "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Ann\r\nBDAY:1990-05-17\r\nNOTE:a\r\n  b\r\nEND:VCARD\r\n"),
        ("LF", "BEGIN:VCARD\nVERSION:3.0\nUID:u1\nFN:Ann\nBDAY:1990-05-17\nNOTE:a\n  b\nEND:VCARD\n"),
        ("CR", "BEGIN:VCARD\rVERSION:3.0\rUID:u1\rFN:Ann\rBDAY:1990-05-17\rNOTE:a\r  b\rEND:VCARD\r"),
        ("mixed", "BEGIN:VCARD\r\nVERSION:3.0\nUID:u1\rFN:Ann\r\nBDAY:1990-05-17\rNOTE:a\n  b\r\nEND:VCARD\n"),
        ("BOM CRLF", "\u{FEFF}BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Ann\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n"),
        ("BOM CR", "\u{FEFF}BEGIN:VCARD\rVERSION:3.0\rUID:u1\rFN:Ann\rBDAY:1990-05-17\rEND:VCARD\r"),
        ("BOM mixed", "\u{FEFF}BEGIN:VCARD\nVERSION:3.0\r\nUID:u1\rFN:Ann\nBDAY:1990-05-17\r\nEND:VCARD"),
    ]

    /// Whatever the line ends or a leading byte-order mark, only the BDAY
    /// line's bytes change (a BOM card used to get a second BDAY after its END:VCARD).
    @Test(arguments: shapes)
    func onlyTheBirthdayLineChangesWhateverTheLineEnds(shape: String, before: String) throws {
        let set = try replacingBirthday(in: before, with: "BDAY:1991-06-18")
        #expect(Array(set.utf8) == Array(Self.onlyTheBirthdayLineChanged(before, to: "BDAY:1991-06-18").utf8), "\(shape): \(set.debugDescription)")
        let cleared = try replacingBirthday(in: before, with: nil)
        #expect(Array(cleared.utf8) == Array(Self.onlyTheBirthdayLineChanged(before, to: nil).utf8), "\(shape): \(cleared.debugDescription)")
        #expect(before.hasPrefix("\u{FEFF}") == set.hasPrefix("\u{FEFF}"))
    }

    /// A card without a birthday gets one before its END:VCARD, with that line's line end, BOM or not.
    @Test(arguments: shapes)
    func aBirthdayIsAddedBeforeTheEndWhateverTheLineEnds(shape: String, before: String) throws {
        let without = Self.onlyTheBirthdayLineChanged(before, to: nil)
        let added = try replacingBirthday(in: without, with: "BDAY:1991-06-18")
        let bytes = Array(without.utf8)
        let end = try #require(without.utf8.firstRange(of: "END:VCARD".utf8)).lowerBound
        let endOffset = without.utf8.distance(from: without.utf8.startIndex, to: end)
        // The END:VCARD line's own line end; the last line has none here, so the first line's.
        func lineEnd(at index: Int) -> [UInt8] {
            bytes[index] == 0x0A ? [0x0A] : index + 1 < bytes.count && bytes[index + 1] == 0x0A ? [0x0D, 0x0A] : [0x0D]
        }
        let afterEnd = endOffset + "END:VCARD".utf8.count
        let eol = afterEnd < bytes.count ? lineEnd(at: afterEnd) : lineEnd(at: bytes.firstIndex { $0 == 0x0D || $0 == 0x0A }!)
        let expected = Array(bytes[..<endOffset]) + Array("BDAY:1991-06-18".utf8) + eol + Array(bytes[endOffset...])
        #expect(Array(added.utf8) == expected, "\(shape): \(added.debugDescription)")
        #expect(added.components(separatedBy: "BDAY").count == 2)
    }

    /// What cannot be changed in its BDAY line alone is refused, and nothing is made to send.
    @Test(arguments: [
        ("empty", ""),
        ("no card", "hello\r\n"),
        ("no END:VCARD", "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Ann\r\nBDAY:1990-05-17\r\n"),
        ("two cards", "BEGIN:VCARD\r\nUID:u1\r\nFN:Ann\r\nEND:VCARD\r\nBEGIN:VCARD\r\nUID:u2\r\nFN:Bob\r\nEND:VCARD\r\n"),
        // A quoted-printable soft break takes the next line into the NOTE: a reader sees no BDAY there.
        ("BDAY inside a soft break", "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:u1\r\nFN:Ann\r\nNOTE;ENCODING=QUOTED-PRINTABLE:a=\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n"),
        // Without BDAY the card's X-ALTBDAY is its birthday: clearing would not clear it.
        ("an X-ALTBDAY stays", "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Ann\r\nBDAY:1990-05-17\r\nX-ALTBDAY;CALSCALE=chinese:19900423\r\nEND:VCARD\r\n"),
    ])
    func whatCannotBeAppliedExactlyIsRefused(shape: String, before: String) {
        #expect(throws: BirthdayLineError.self, "\(shape)") {
            _ = try replacingBirthday(in: before, with: shape == "an X-ALTBDAY stays" ? nil : "BDAY:1991-06-18")
        }
    }

    @Test(arguments: [
        (2024, 5, 17, "VERSION:3.0", "BDAY:2024-05-17"),
        (nil, 5, 17, "VERSION:4.0", "BDAY:--0517"),
        (nil, 12, 1, "VERSION:3.0", "BDAY;X-APPLE-OMIT-YEAR=1604:1604-12-01"),
        (987, 1, 2, "VERSION:4.0", "BDAY:0987-01-02"),
    ] as [(Int?, Int, Int, String, String)])
    func birthdayLinesSuitTheCardVersion(year: Int?, month: Int, day: Int, version: String, expected: String) {
        let card = "BEGIN:VCARD\r\n\(version)\r\nFN:x\r\nEND:VCARD\r\n"
        #expect(birthdayProperty(year: year, month: month, day: day, forCard: card) == expected)
    }
}
