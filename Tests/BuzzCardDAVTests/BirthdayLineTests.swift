import BuzzCardDAV
import Foundation
import Testing

/// `replacingBirthday(in:with:)`: the BDAY line changes, no other byte does.
@Suite struct BirthdayLineTests {
    @Test func replacesOnlyTheBirthdayLine() {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1990-05-17\r\nX-UNKNOWN;A=b:c\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: "BDAY:1991-06-18")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1991-06-18\r\nX-UNKNOWN;A=b:c\r\nEND:VCARD\r\n")
    }

    @Test func keepsLineFeedLineEnds() {
        let card = "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\nBDAY:--0517\nEND:VCARD\n"
        #expect(replacingBirthday(in: card, with: "BDAY:1990-05-17") == "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\nBDAY:1990-05-17\nEND:VCARD\n")
    }

    @Test func replacesAFoldedGroupedBirthdayWithParametersWhole() {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nitem1.BD\r\n AY;VALUE=date:1990-\r\n 05-17\r\nNOTE:a long note that the server\r\n  folded\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: "BDAY:2001-02-03")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nBDAY:2001-02-03\r\nNOTE:a long note that the server\r\n  folded\r\nEND:VCARD\r\n")
    }

    @Test func removesTheBirthdayForClearBirthday() {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nbday;VALUE=text:circa 1900\r\nFN:Ann\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: nil) == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nEND:VCARD\r\n")
    }

    @Test func aCardWithoutBirthdayIsLeftAloneByClearAndGetsOneBeforeItsEnd() {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: nil) == card)
        #expect(replacingBirthday(in: card, with: "BDAY:1990-05-17")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n")
        let bare = "BEGIN:VCARD\nFN:Ann\nEND:VCARD"
        #expect(replacingBirthday(in: bare, with: "BDAY:1990-05-17") == "BEGIN:VCARD\nFN:Ann\nBDAY:1990-05-17\nEND:VCARD")
    }

    @Test func aSecondBirthdayLineGoesAndANestedCardIsUntouched() {
        let card = "BEGIN:VCARD\r\nBDAY:1990-05-17\r\nAGENT:\r\nBEGIN:VCARD\r\nBDAY:1950-01-01\r\nEND:VCARD\r\nBDAY:1991-01-01\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: "BDAY:2000-01-01")
            == "BEGIN:VCARD\r\nBDAY:2000-01-01\r\nAGENT:\r\nBEGIN:VCARD\r\nBDAY:1950-01-01\r\nEND:VCARD\r\nEND:VCARD\r\n")
    }

    @Test func lineBreaksInTheNewValueCannotAddALine() {
        let card = "BEGIN:VCARD\r\nBDAY:1990-05-17\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: "BDAY:2000-01-01\r\nX-EVIL:1")
            == "BEGIN:VCARD\r\nBDAY:2000-01-01X-EVIL:1\r\nEND:VCARD\r\n")
    }

    @Test func aTwoMegabytePhotoComesBackByteIdentical() {
        let photo = "PHOTO;ENCODING=b;TYPE=JPEG:" + String(repeating: "QUJDRA", count: 350_000)
        let before = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Big\r\n" + photo + "\r\nBDAY:1990-05-17\r\nX-ODD:ü\r\nEND:VCARD\r\n"
        #expect(before.utf8.count > 2_000_000)
        let after = replacingBirthday(in: before, with: "BDAY:1991-06-18")
        #expect(after == before.replacingOccurrences(of: "BDAY:1990-05-17", with: "BDAY:1991-06-18"))
        let cleared = replacingBirthday(in: before, with: nil)
        #expect(cleared == before.replacingOccurrences(of: "BDAY:1990-05-17\r\n", with: ""))
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
