import Foundation

/// How an ask for a birthday can reach a contact (docs/design/asks-and-wishes.md): a pure function of
/// the contact's card and the config, over validated addresses only.
public struct AskPlan: Sendable, Equatable {
    /// A route the contact can take, with the address the rule picked and the alternatives.
    public struct Route: Sendable, Equatable {
        public var kind: BuzzConfig.AskRoute
        /// The phone (`+` and digits) or email address; nil for share without either.
        public var address: String?
        /// Every usable address for this route, in preference order (`address` first).
        public var candidates: [String]
        /// The channel that sends it (`ask.sms` / `ask.email`); nil for share and compose.
        public var channel: String?
    }

    /// Usable routes in `ask.order`.
    public var routes: [Route]
    /// Routes passed over, and why ("no phone number", "no sms channel configured").
    public var passedOver: [(route: BuzzConfig.AskRoute, reason: String)]

    public static func == (lhs: AskPlan, rhs: AskPlan) -> Bool {
        lhs.routes == rhs.routes && lhs.passedOver.map { "\($0.route)\($0.reason)" } == rhs.passedOver.map { "\($0.route)\($0.reason)" }
    }

    /// The ordered routes for `card` under `config`: `ask.order`, or only the route
    /// the user named (`ask --via share` works whatever `ask.order` says, and its
    /// reasons are about that route alone).
    public init(card: ContactCard, config: BuzzConfig, only: BuzzConfig.AskRoute? = nil) {
        routes = []
        passedOver = []
        let phones = AskPlan.phones(card.phones)
        let emails = AskPlan.emails(card.emails)
        for kind in only.map({ [$0] }) ?? config.ask.order {
            switch kind {
            case .sms:
                if phones.isEmpty {
                    passedOver.append((.sms, card.phones.isEmpty ? "no phone number" : "no usable phone number"))
                } else if let channel = config.ask.sms {
                    routes.append(Route(kind: .sms, address: phones[0], candidates: phones, channel: channel))
                } else {
                    passedOver.append((.sms, "no sms channel configured (set ask.sms)"))
                }
            case .email:
                if emails.isEmpty {
                    passedOver.append((.email, card.emails.isEmpty ? "no email address" : "no usable email address"))
                } else if config.ask.emailMode == .compose {
                    routes.append(Route(kind: .email, address: emails[0], candidates: emails, channel: nil))
                } else if let channel = config.ask.email {
                    routes.append(Route(kind: .email, address: emails[0], candidates: emails, channel: channel))
                } else {
                    passedOver.append((.email, "no email channel configured (set ask.email, or ask.email_mode = \"compose\")"))
                }
            case .share:
                routes.append(Route(kind: .share, address: phones.first ?? emails.first, candidates: phones + emails,
                                    channel: nil))
            }
        }
    }

    /// Phones reduced to `+` and digits, cell/mobile first, then preferred, then card order;
    /// numbers with fewer than 5 digits are not usable.
    public static func phones(_ phones: [Phone]) -> [String] {
        let ranked = phones.enumerated().sorted { a, b in
            let rankA = (a.element.kind == .cell ? 0 : 2) + (a.element.preferred ? 0 : 1)
            let rankB = (b.element.kind == .cell ? 0 : 2) + (b.element.preferred ? 0 : 1)
            return rankA != rankB ? rankA < rankB : a.offset < b.offset
        }
        var seen: [String] = []
        for (_, phone) in ranked {
            guard let number = normalizedPhone(phone.number), !seen.contains(number) else { continue }
            seen.append(number)
        }
        return seen
    }

    /// `+` (leading only) and digits; nil when fewer than 5 digits remain.
    public static func normalizedPhone(_ text: String) -> String? {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "+", out.isEmpty { out.append("+") }
            else if scalar.isASCII, scalar.properties.numericType == .decimal { out.unicodeScalars.append(scalar) }
        }
        return out.filter(\.isNumber).count >= 5 ? out : nil
    }

    /// Plain addr-spec emails only, preferred first.
    public static func emails(_ emails: [Email]) -> [String] {
        let ranked = emails.enumerated().sorted { a, b in
            a.element.preferred != b.element.preferred ? a.element.preferred : a.offset < b.offset
        }
        var seen: [String] = []
        for (_, email) in ranked where Mailbox.isPlainAddress(email.address) && !seen.contains(email.address) {
            seen.append(email.address)
        }
        return seen
    }
}

/// `sms:` and `mailto:` links with every part percent-encoded (RFC 3986, RFC 6068, RFC 5724).
public enum AskLink {
    /// Characters left as they are in a query value: unreserved only.
    private static let unreserved: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return set
    }()

    public static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `mailto:addr?subject=…&body=…`; nil when the address is not a plain addr-spec.
    public static func mailto(_ address: String, subject: String, body: String) -> String? {
        guard Mailbox.isPlainAddress(address) else { return nil }
        let crlfBody = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        return "mailto:" + percentEncode(address).replacingOccurrences(of: "%40", with: "@")
            + "?subject=" + percentEncode(subject) + "&body=" + percentEncode(crlfBody)
    }

    /// `sms:+49170…?body=…`; nil when the number is not usable.
    public static func sms(_ phone: String, body: String) -> String? {
        guard let number = AskPlan.normalizedPhone(phone) else { return nil }
        return "sms:" + number + "?body=" + percentEncode(body)
    }
}
