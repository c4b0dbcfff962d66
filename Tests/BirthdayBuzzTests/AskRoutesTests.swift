import Foundation
import Testing
@testable import BirthdayBuzz

@Suite struct AskRoutesTests {
    static func config(_ toml: String) throws -> BuzzConfig {
        try BuzzConfig(toml: toml, file: "t.toml", environment: [:], systemTimeZone: TimeZone(identifier: "UTC")!, types: .shipped)
    }

    static let channels = """
        [ask]
        sms = "gateway"
        email = "mail"
        [channels.gateway]
        type = "webhook"
        url = "https://sms.example.net/send"
        [channels.mail]
        type = "smtp"
        host = "smtp.example.org"
        from = "me@example.org"
        to = "me@example.org"
        """

    static func card(phones: [Phone] = [], emails: [Email] = []) -> ContactCard {
        ContactCard(id: "c", name: "Sam Example", phones: phones, emails: emails)
    }

    @Test func phoneOnly() throws {
        let plan = AskPlan(card: Self.card(phones: [Phone(number: "+49 (170) 123-4567", kind: .cell)]), config: try Self.config(Self.channels))
        #expect(plan.routes.map(\.kind) == [.sms, .share])
        #expect(plan.routes.first?.address == "+491701234567")
        #expect(plan.routes.first?.channel == "gateway")
        #expect(plan.passedOver.map(\.reason) == ["no email address"])
    }

    @Test func emailOnly() throws {
        let plan = AskPlan(card: Self.card(emails: [Email(address: "sam@example.org")]), config: try Self.config(Self.channels))
        #expect(plan.routes.map(\.kind) == [.email, .share])
        #expect(plan.routes.first?.channel == "mail")
        #expect(plan.passedOver.map(\.reason) == ["no phone number"])
    }

    @Test func bothAndNeither() throws {
        let config = try Self.config(Self.channels)
        let both = AskPlan(card: Self.card(phones: [Phone(number: "0170 1234567")], emails: [Email(address: "s@example.org")]),
                           config: config)
        #expect(both.routes.map(\.kind) == [.sms, .email, .share])
        #expect(both.passedOver.isEmpty)
        let neither = AskPlan(card: Self.card(), config: config)
        #expect(neither.routes.map(\.kind) == [.share])
        #expect(neither.routes.first?.address == nil)
        #expect(neither.passedOver.map(\.reason) == ["no phone number", "no email address"])
    }

    @Test func severalCellsAndPreference() {
        let phones = [Phone(number: "+1 555 0100", kind: .home, preferred: true), Phone(number: "+1 555 0101", kind: .cell),
                      Phone(number: "+1 555 0102", kind: .cell, preferred: true), Phone(number: "+1 555 0103", kind: .work)]
        #expect(AskPlan.phones(phones) == ["+15550102", "+15550101", "+15550100", "+15550103"])
        let emails = [Email(address: "a@example.org"), Email(address: "b@example.org", preferred: true),
                      Email(address: "a@b.c?attach=~/.ssh/id_rsa", preferred: true)]
        #expect(AskPlan.emails(emails) == ["b@example.org", "a@example.org"])
    }

    @Test func channelsMissingAndCompose() throws {
        let card = Self.card(phones: [Phone(number: "+44 20 7946 0018", kind: .cell)], emails: [Email(address: "s@example.org")])
        let bare = AskPlan(card: card, config: try Self.config(""))
        #expect(bare.routes.map(\.kind) == [.share])
        #expect(bare.passedOver.map(\.reason) == ["no sms channel configured (set ask.sms)",
                                                  "no email channel configured (set ask.email, or ask.email_mode = \"compose\")"])
        let compose = AskPlan(card: card, config: try Self.config("[ask]\nemail_mode = \"compose\"\norder = [\"email\", \"share\"]"))
        #expect(compose.routes.map(\.kind) == [.email, .share])
        #expect(compose.routes.first?.channel == nil)
    }

    @Test func linksArePercentEncoded() {
        #expect(AskLink.mailto("sam@example.org", subject: "Kurze Frage", body: "Hallo Sam & co,\nwann?")
                == "mailto:sam@example.org?subject=Kurze%20Frage&body=Hallo%20Sam%20%26%20co%2C%0D%0Awann%3F")
        #expect(AskLink.mailto("a@b.c?attach=~/.ssh/id_rsa", subject: "x", body: "y") == nil)
        #expect(AskLink.sms("+49 170 1234567", body: "Hi Sam! 100% ok?") == "sms:+491701234567?body=Hi%20Sam%21%20100%25%20ok%3F")
        #expect(AskLink.sms("12", body: "x") == nil)
    }
}
