import BuzzCardDAV
import Testing

@Suite struct BirthdayLineTests {
    @Test func replacesOnlyTheBirthdayLine() {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1990-05-17\r\nX-UNKNOWN;A=b:c\r\nEND:VCARD\r\n"
        #expect(replacingBirthday(in: card, with: "BDAY:1991-06-18")
            == "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nBDAY:1991-06-18\r\nX-UNKNOWN;A=b:c\r\nEND:VCARD\r\n")
    }
}
