import BirthdayBuzz
import BuzzProcess
import CurlSupport
import Foundation

/// Email through SMTP with libcurl (docs/design/channels.md): STARTTLS by default and
/// required, implicit TLS, or plain only to a loopback host.
public struct SMTPChannel: NotificationChannel {
    public let name: String
    private let options: Options
    private let from: Mailbox
    private let recipients: [Mailbox]
    private let password: String?
    private let timeout: Double
    private let scrubber: SecretScrubber
    private let session: CurlSession
    private let clock: @Sendable () -> Date
    /// The name said in EHLO (nil: libcurl's default, the bare host name).
    let ehloName: String?

    public init(name: String, options: Options, timeout: Double, context: ChannelContext,
                clock: @escaping @Sendable () -> Date = { Date() }, ehloName: String? = SMTPChannel.localEHLOName) throws {
        self.name = name
        self.ehloName = ehloName
        self.options = options
        self.timeout = timeout
        self.clock = clock
        scrubber = context.scrubber
        guard let from = Mailbox(options.from) else {
            throw ChannelSetupError(message: "\(name): from \"\(OneLine.escaped(options.from))\" is not an email address")
        }
        self.from = from
        recipients = try options.to.map { text in
            guard let mailbox = Mailbox(text) else {
                throw ChannelSetupError(message: "\(name): to \"\(OneLine.escaped(text))\" is not an email address")
            }
            return mailbox
        }
        if options.security == .none, !Options.isLoopback(options.host) {
            throw ChannelSetupError(message: "\(name): security = \"none\" sends mail and password in clear text; it is only allowed to a loopback host, not \(options.host)")
        }
        do {
            password = try options.password.map { secret throws(SecretError) in
                try SecretReader.read(secret, for: name, environment: context.environment,
                                      configDirectory: context.configDirectory, resolvePath: context.resolvePath)
            }
        } catch {
            throw ChannelSetupError(message: error.message)
        }
        if let password { context.scrubber.register(password) }
        session = CurlSession(label: name)
    }

    private var url: String {
        let host = options.host.contains(":") && !options.host.hasPrefix("[") ? "[\(options.host)]" : options.host
        // libcurl says the URL's path in EHLO (smtp://host:587/NAME), else the bare host name.
        return (options.security == .tls ? "smtps://" : "smtp://") + host + ":\(options.port)" + (ehloName.map { "/" + $0 } ?? "")
    }

    /// This machine's fully-qualified name, for EHLO (RFC 5321 §4.1.4), when
    /// one is known; looked up once.
    public static let localEHLOName: String? = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let hostname = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return fullyQualifiedName(hostname: hostname, canonicalName: canonicalName(of:))
    }()

    /// The host name when it is fully qualified (has a dot), else its canonical
    /// name when that is; nil when neither is (no such name is known).
    static func fullyQualifiedName(hostname: String, canonicalName: (String) -> String?) -> String? {
        func usable(_ candidate: String) -> String? {
            var name = candidate.lowercased()
            if name.hasSuffix(".") { name.removeLast() }
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            guard labels.count >= 2, name.count <= 253, !name.hasPrefix("localhost"),
                  labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 && !$0.hasPrefix("-") && !$0.hasSuffix("-")
                      && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }),
                  !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }  // not an IPv4 address
            return name
        }
        guard !hostname.isEmpty else { return nil }
        return usable(hostname) ?? canonicalName(hostname).flatMap(usable)
    }

    /// `getaddrinfo`'s canonical name for a host (AI_CANONNAME: /etc/hosts, then DNS).
    static func canonicalName(of host: String) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_CANONNAME
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(first) }
        return first.pointee.ai_canonname.map { String(cString: $0) }
    }

    private func transfer(to recipients: [Mailbox], message: Message) -> MailTransfer {
        let bytes = MailMessage.compose(from: from, to: recipients, subject: message.title, body: message.body,
                                        eventID: message.id, date: clock(), autoSubmitted: message.kind.isReminder)
        return MailTransfer(url: url, requireTLS: options.security == .starttls, username: options.username,
                            password: password, from: from.address, recipients: recipients.map(\.address), message: bytes,
                            timeout: timeout, security: TransferSecurity(insecure: options.insecure, caFile: options.caFile))
    }

    /// One mail, one SMTP transaction, to every address of `to` (they are the
    /// user's own, so one `To:` header names them all); an ask goes to the
    /// contact's address instead. One transaction is all or nothing: libcurl stops
    /// at a refused RCPT before DATA, so a retry can never deliver a second copy to
    /// an address that took the first. The batch reuses one connection.
    public func deliver(_ message: Message) async throws {
        let targets: [Mailbox]
        if let recipient = message.recipient {
            guard case .email(let address) = recipient,
                  let mailbox = Mailbox(name: message.contact?.name, address: address) else {
                throw DeliveryError.permanent("\(name): \"\(recipient.address)\" is not an email address")
            }
            targets = [mailbox]
        } else {
            targets = recipients
        }
        guard !targets.isEmpty else {
            throw DeliveryError.permanent("\(name): no recipient (set to = \"you@example.org\")")
        }
        let addresses = targets.map(\.address).joined(separator: ", ")
        do {
            try await session.sendMail(transfer(to: targets, message: message))
        } catch let error as SMTPError {
            throw classify(error, recipient: addresses)
        } catch let error as CurlError {
            throw classify(SMTPError(curl: error, reply: 0), recipient: addresses)
        }
    }

    /// Connects, says EHLO, STARTTLS and AUTH as configured, without sending mail.
    public func validate() async throws {
        var check = transfer(to: [from], message: Message(id: "validate", title: "", body: ""))
        check.recipients = []
        do {
            try await session.verify(check)
        } catch let error as SMTPError {
            throw classify(error, recipient: nil)
        } catch let error as CurlError {
            throw classify(SMTPError(curl: error, reply: 0), recipient: nil)
        }
    }

    public func shutdown() async {
        await session.close()
    }

    private func classify(_ error: SMTPError, recipient: String?) -> DeliveryError {
        SMTPChannel.classify(error, place: "\(name): \(options.host):\(options.port)", user: options.username,
                             detail: scrubber.scrub(error.description), recipient: recipient)
    }

    /// What a failed SMTP transfer means: permanent for a refused login, a missing
    /// STARTTLS, a bad certificate or a 5xx reply; temporary otherwise (4xx included).
    static func classify(_ error: SMTPError, place: String, user: String?, detail: String,
                         recipient: String?) -> DeliveryError {
        if error.curl.isTLSRequiredButUnavailable {
            return .permanent("\(place): the server does not offer STARTTLS (security = \"starttls\" requires it)")
        }
        if error.curl.isLoginDenied {
            let user = user ?? "(no username)"
            // 454 and other 4xx replies to AUTH mean "not now" (Gmail's "too many login attempts").
            if (400..<500).contains(error.reply) {
                return .temporary("\(place): login for \(user) refused for now (server replied \(error.reply))")
            }
            return .permanent("\(place): login refused for \(user): check the password")
        }
        if error.curl.isCertificateProblem {
            return .permanent("\(place): \(detail) (set ca_file, or insecure = true for a test server)")
        }
        if (500..<600).contains(error.reply) {
            return .permanent("\(place): " + (recipient.map { "mail to \($0) refused: " } ?? "") + detail)
        }
        if error.curl.isConnectionFailure || error.curl.isTimeout { return .unavailable("\(place): \(detail)") }
        return .temporary("\(place): \(detail)")
    }
}

/// `type = "smtp"` (docs/design/channels.md): `host`, `port`, `security`, `username`, one of
/// `password_env` / `password_file` / `password_command`, `from`, `to` (a string
/// or an array), `insecure`, `ca_file`.
extension SMTPChannel: ChannelType {
    public enum Security: String, Sendable, CaseIterable { case starttls, tls, none }

    public struct Options: Sendable {
        /// Where `security = "none"` is allowed: mail and password cross no network
        /// (an address, not a name that starts with `127.`).
        public static func isLoopback(_ host: String) -> Bool {
            isLoopbackHost(host)
        }

        public var host: String
        public var port: Int
        public var security: Security
        public var username: String?
        public var password: ChannelConfig.SecretSource?
        public var from: String
        public var to: [String]
        public var insecure = false
        public var caFile: String?

        public init(host: String, port: Int, security: Security = .starttls, username: String? = nil,
                    password: ChannelConfig.SecretSource? = nil, from: String, to: [String], insecure: Bool = false,
                    caFile: String? = nil) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
            self.from = from
            self.to = to
            self.insecure = insecure
            self.caFile = caFile
        }
    }

    public static let typeName = "smtp"

    /// Mail to the configured `to`, or to the contact's address for an ask.
    public static let capabilities: ChannelCapabilities = [.reminders, .asksByEmail]

    public static func options(from table: TableReader) throws -> Options {
        guard let host = try table.string("host"), !host.isEmpty else { throw table.problem("host", "missing") }
        let security = try table.choice("security", Security.self) ?? .starttls
        if security == .none, !Options.isLoopback(host) {
            throw table.problem("security", "\"none\" sends mail and password in clear text; it is only allowed "
                                + "to a loopback host (127.0.0.1, ::1, localhost), not \(host)")
        }
        let defaultPort: Int
        switch security {
        case .starttls: defaultPort = 587
        case .tls: defaultPort = 465
        case .none: defaultPort = 25
        }
        let port = try table.int("port") ?? defaultPort
        guard (1...65_535).contains(port) else { throw table.problem("port", "\(port) is not a TCP port") }
        guard let from = try table.string("from"), !from.isEmpty else {
            throw table.problem("from", "missing: the sender address, e.g. \"Buzz <me@example.org>\"")
        }
        let to: [String]
        if let single = try? table.string("to") {
            to = [single]
        } else {
            to = try table.stringArray("to") ?? []
        }
        let password = try table.secretSource()
        return Options(host: host, port: port, security: security, username: try table.string("username"),
                       password: password, from: from, to: to,
                       insecure: try table.bool("insecure") ?? false, caFile: try table.string("ca_file"))
    }

    public static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
        try SMTPChannel(name: config.name, options: options, timeout: config.timeout, context: context)
    }

    public static func target(of options: Options, environment: [String: String]) -> String {
        let to = options.to.isEmpty ? "" : " → " + options.to.joined(separator: ", ")
        return "\(options.security.rawValue) \(options.host):\(options.port)\(to)"
    }
}
