import BirthdayBuzz
import CurlSupport
import Foundation
import Mustache

/// HTTP(S) webhooks through libcurl: the generic JSON body, presets for chat and
/// push services, or a custom Mustache body (docs/design/channels.md).
public struct WebhookChannel: NotificationChannel {
    public let name: String
    let url: String
    let options: Options
    private let headers: [(name: String, value: String)]
    private let template: MustacheTemplate?
    let timeout: Double
    let scrubber: SecretScrubber
    let session: CurlSession
    /// The telegram preset's bot token or the pushover preset's application token, resolved.
    let presetToken: String

    public init(name: String, options: Options, timeout: Double, context: ChannelContext) throws {
        self.name = name
        var options = options
        self.timeout = timeout
        scrubber = context.scrubber
        switch options.target {
        case .url(let url):
            self.url = url
        case .environment(let variable):
            guard let value = context.environment[variable], !value.isEmpty else {
                throw ChannelSetupError(message: "\(name): url_env names \(variable), which is not set")
            }
            context.scrubber.register(value)
            if value.hasPrefix("https://") || value.hasPrefix("http://") {
                if options.phone?.apiURL != nil {
                    throw ChannelSetupError(message: "\(name): api_url is for an Apprise URL in \(variable), which holds an http(s) URL")
                }
                url = value
            } else if AppriseURL.looksLikeOne(value) {
                // An Apprise URL read from the environment is parsed now, as `url` is at load time.
                do {
                    url = try AppriseURL.apply(value, to: &options)
                } catch let problem as AppriseURL.Problem {
                    throw ChannelSetupError(message: "\(name): \(variable): \(problem.message)")
                }
            } else {
                throw ChannelSetupError(message: "\(name): \(variable) does not hold an http(s) or Apprise URL")
            }
        }
        self.options = options
        presetToken = try WebhookChannel.resolvePresetToken(options, name: name, context: context)
        // Slack, Discord, ntfy and Gotify keep their secret in the path or query.
        WebhookChannel.registerURLSecrets(url, in: context.scrubber)
        var resolved: [(String, String)] = []
        for header in options.headers {
            switch header.value {
            case .literal(let value):
                // An inline value (`X-Api-Key = "…"`) is as secret as one read from the environment,
                // unless the header is one that never carries a secret (ntfy's `Title`, `Content-Type`).
                if !WebhookChannel.publicHeaders.contains(header.name.lowercased()) { context.scrubber.register(value) }
                resolved.append((header.name, value))
            case .environment(let variable):
                guard let value = context.environment[variable] else {
                    throw ChannelSetupError(message: "\(name): header \(header.name) reads \(variable), which is not set")
                }
                context.scrubber.register(value)
                resolved.append((header.name, value))
            }
        }
        headers = resolved.map { (name: $0.0, value: MailMessage.headerSafeValue($0.1)) }
        if let body = options.body {
            do {
                template = try MustacheTemplate(string: "{{% CONTENT_TYPE: TEXT}}" + body)
            } catch {
                throw ChannelSetupError(message: "\(name): body is not a valid Mustache template (\(error))")
            }
        } else {
            template = nil
        }
        session = CurlSession(label: name)
    }

    /// Headers whose inline values are not secrets, so they are not scrubbed from
    /// replies ("expected application/json" stays readable).
    static let publicHeaders: Set<String> = [
        "accept", "accept-language", "content-type", "user-agent", "title", "priority", "tags", "click", "icon",
        "markdown", "x-title", "x-priority", "x-tags",
    ]

    /// The URL as it may be shown: scheme and host (an Apprise URL: its scheme and the host it resolves to).
    public var displayURL: String {
        if let apprise = options.apprise { return AppriseURL.display(scheme: apprise.scheme, resolved: url) }
        return SecretScrubber.displayURL(url)
    }

    public func deliver(_ message: Message) async throws {
        let request = try buildRequest(message)
        let response: HTTPResponse
        do {
            response = try await session.http(request)
        } catch let error as CurlError {
            throw classify(error)
        }
        try check(response)
    }

    public func validate() async throws {
        if options.preset == .matrix, options.body == nil { return try await validateMatrix() }
        if options.preset == .telegram { return try await validateTelegram() }
        if options.preset == .pushover { return try await validatePushover() }
        // A HEAD-less check: connect and see that something answers. Any HTTP
        // status proves the endpoint is there; only transport errors fail.
        var request = HTTPRequest(url: url, method: "OPTIONS", headers: headers, timeout: min(timeout, 5),
                                  security: TransferSecurity(insecure: options.insecure, caFile: options.caFile))
        request.body = []
        do {
            _ = try await session.http(request)
        } catch let error as CurlError {
            throw classify(error)
        }
    }

    /// The matrix preset's doctor check: the homeserver accepts the token
    /// (`GET /_matrix/client/v3/account/whoami`) and that account has joined the
    /// room of the URL (`GET /_matrix/client/v3/joined_rooms`).
    private func validateMatrix() async throws {
        guard let parts = WebhookChannel.matrixParts(url) else {
            throw DeliveryError.permanent("\(name): url is not a Matrix send URL (https://HOMESERVER/_matrix/client/v3/rooms/ROOM_ID/send/m.room.message)")
        }
        func get(_ endpoint: String) async throws -> HTTPResponse {
            let request = HTTPRequest(url: parts.homeserver + "/_matrix/client/v3/" + endpoint + parts.query, method: "GET",
                                      headers: [("User-Agent", "BirthdayBuzz")] + headers, timeout: min(timeout, 5),
                                      security: TransferSecurity(insecure: options.insecure, caFile: options.caFile))
            do {
                return try await session.http(request)
            } catch let error as CurlError {
                throw classify(error)
            }
        }
        let whoami = try await get("account/whoami")
        if whoami.status == 401 || whoami.status == 403 {
            throw DeliveryError.permanent("\(name): the homeserver does not accept the access token (HTTP \(whoami.status) \(Self.matrixErrorCode(whoami.body) ?? "from whoami")); put a valid one in the Authorization header as \"Bearer TOKEN\"")
        }
        try check(whoami)
        let user = (try? JSONSerialization.jsonObject(with: Data(whoami.body)) as? [String: Any])?["user_id"] as? String ?? "the account"
        let joined = try await get("joined_rooms")
        try check(joined)
        let rooms = (try? JSONSerialization.jsonObject(with: Data(joined.body)) as? [String: Any])?["joined_rooms"] as? [String] ?? []
        guard rooms.contains(parts.roomID) else {
            throw DeliveryError.permanent("\(name): \(MailMessage.headerSafeValue(user)) has not joined room \(parts.roomID) (invite it, and accept the invitation as that account)")
        }
    }

    /// A send URL's homeserver (scheme, credentials and host, with any path
    /// before `/_matrix/`), room id (percent-decoded) and query (`?access_token=…`, or "").
    static func matrixParts(_ url: String) -> (homeserver: String, roomID: String, query: String)? {
        var path = Substring(url)
        var query: Substring = ""
        if let cut = url.firstIndex(of: "?") {
            path = url[..<cut]
            query = url[cut...]
        }
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        guard let api = path.range(of: "/_matrix/"), let rooms = path.range(of: "/rooms/") else { return nil }
        let room = path[rooms.upperBound...].prefix { $0 != "/" }
        guard !room.isEmpty, let roomID = String(room).removingPercentEncoding else { return nil }
        return (String(path[..<api.lowerBound]), roomID, String(query))
    }

    /// `errcode` of a Matrix error reply (`M_UNKNOWN_TOKEN`).
    static func matrixErrorCode(_ body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let code = object["errcode"] as? String, code.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "_") }) else { return nil }
        return code
    }

    public func shutdown() async {
        await session.close()
    }

    // MARK: - Request

    func buildRequest(_ message: Message) throws -> HTTPRequest {
        var requestHeaders: [(name: String, value: String)] = [
            ("Idempotency-Key", MailMessage.headerSafeValue(message.id)), ("User-Agent", "BirthdayBuzz"),
        ]
        var method = options.method
        var target = url
        let body: String
        /// The body already as bytes (the generic payload is written as bytes).
        var bodyBytes: [UInt8]?
        var contentType = "application/json"
        if let apprise = options.apprise, let shaped = appriseBody(message, shape: apprise.shape) {
            body = shaped.body
            requestHeaders.append(contentsOf: shaped.headers)
        } else if let template {
            contentType = options.contentType ?? "text/plain"
            body = template.render(WebhookChannel.templateValues(message, escapedFor: contentType))
        } else {
            switch options.preset {
            case .generic:
                bodyBytes = GenericPayload.bytes(message)
                body = ""
            case .slack, .mattermost:
                // Names come from vCards: `<!channel>` or `@all` in one must not ping anyone.
                let defuse = options.preset == .slack ? WebhookChannel.slackEscaped : WebhookChannel.mattermostEscaped
                body = jsonObject([("text", "*\(defuse(message.title))*"
                                    + (message.body.isEmpty ? "" : "\n" + defuse(message.body)))])
            case .discord:
                var object = JSONObject()
                object.add("content", "**\(message.title)**" + (message.body.isEmpty ? "" : "\n" + message.body))
                object.add("allowed_mentions", raw: "{\"parse\":[]}")  // no @everyone, @here or user pings
                body = object.json
            case .ntfy:
                contentType = "text/plain; charset=utf-8"
                body = message.body.isEmpty ? message.title : message.body
                requestHeaders.append(("Title", MailMessage.encodedHeaderValue(message.title)))
                requestHeaders.append(("Priority", message.urgency == .critical ? "5" : message.urgency == .low ? "2" : "3"))
                requestHeaders.append(("Tags", "birthday"))
            case .gotify:
                var object = JSONObject()
                object.add("title", message.title)
                object.add("message", message.body)
                object.add("priority", message.urgency == .critical ? 8 : message.urgency == .low ? 2 : 5)
                body = object.json
            case .matrix:
                // PUT …/send/m.room.message/{txnId}: the event id makes retries idempotent.
                method = "PUT"
                target = WebhookChannel.matrixSendURL(url, transactionID: message.id)
                var object = JSONObject()
                object.add("msgtype", options.msgtype)
                object.add("body", message.body.isEmpty ? message.title : message.title + "\n" + message.body)
                object.add("format", "org.matrix.custom.html")
                object.add("formatted_body", "<b>" + WebhookChannel.htmlEscaped(message.title) + "</b>"
                           + (message.body.isEmpty ? "" : "<br>" + WebhookChannel.htmlEscaped(message.body)
                              .replacingOccurrences(of: "\n", with: "<br>")))
                body = object.json
            case .telegram:
                target = telegramEndpoint("sendMessage")
                body = telegramBody(message)
            case .pushover:
                target = pushoverEndpoint("messages.json")
                contentType = "application/x-www-form-urlencoded"
                body = pushoverBody(message)
            }
        }
        requestHeaders.append(("Content-Type", contentType))
        requestHeaders.append(contentsOf: headers)
        return HTTPRequest(url: target, method: method, headers: requestHeaders, body: bodyBytes ?? Array(body.utf8),
                           timeout: timeout, security: TransferSecurity(insecure: options.insecure, caFile: options.caFile))
    }

    /// `…/send/m.room.message/{txnId}`: the transaction id goes at the end of the
    /// path, before a query (`?access_token=…`) or fragment, never after it.
    static func matrixSendURL(_ url: String, transactionID: String) -> String {
        var path = Substring(url)
        var tail: Substring = ""
        if let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            path = url[..<cut]
            tail = url[cut...]
        }
        return path + (path.hasSuffix("/") ? "" : "/") + percentEncodePathSegment(transactionID) + tail
    }

    /// Text for Matrix's `org.matrix.custom.html` body: `&`, `<`, `>`, `"` and `'` escaped.
    static func htmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    /// Slack's control characters in message text: `&`, `<`, `>` (`<!channel>`, links).
    static func slackEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Mattermost pings on `@all`, `@channel`, `@here` and `@user`: a zero-width space
    /// after each `@` keeps the text as it reads and pings no one.
    static func mattermostEscaped(_ text: String) -> String {
        slackEscaped(text).replacingOccurrences(of: "@", with: "@\u{200B}")
    }

    private func jsonObject(_ fields: [(String, String)]) -> String {
        var object = JSONObject()
        for (key, value) in fields { object.add(key, value) }
        return object.json
    }

    /// Template variables, each escaped for the body's content type so a quote
    /// in a name can never break or inject into the payload.
    static func templateValues(_ message: Message, escapedFor contentType: String) -> [String: String] {
        let escape: (String) -> String
        let type = contentType.lowercased()
        if type.contains("json") {
            escape = { String(JSONObject.quote($0).dropFirst().dropLast()) }
        } else if type.contains("x-www-form-urlencoded") {
            escape = formEncode
        } else {
            escape = { $0 }
        }
        var values: [String: String] = [
            "title": message.title, "body": message.body, "id": message.id, "event": message.kind.rawValue,
            "locale": message.locale, "urgency": message.urgency.rawValue,
        ]
        if let contact = message.contact {
            values["name"] = contact.name
            values["contact_id"] = contact.id
        }
        if let occurrence = message.occurrence { values["occurrence"] = occurrence.description }
        if let days = message.daysUntil { values["days_until"] = String(days) }
        if let recipient = message.recipient { values["to"] = recipient.address }
        return values.mapValues(escape)
    }

    /// `application/x-www-form-urlencoded` value encoding.
    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return text.unicodeScalars.map { scalar -> String in
            if scalar == " " { return "+" }
            if scalar.isASCII, allowed.contains(scalar) { return String(scalar) }
            return String(scalar).utf8.map { String(format: "%%%02X", $0) }.joined()
        }.joined()
    }

    static func percentEncodePathSegment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.unicodeScalars.map { scalar -> String in
            if scalar.isASCII, allowed.contains(scalar) { return String(scalar) }
            return String(scalar).utf8.map { String(format: "%%%02X", $0) }.joined()
        }.joined()
    }

    static func registerURLSecrets(_ url: String, in scrubber: SecretScrubber) {
        guard let components = URLComponents(string: url) else { return }
        for item in components.queryItems ?? [] { if let value = item.value { scrubber.register(value) } }
        // libcurl sends `user:password@` as `Authorization: Basic base64(user:password)`.
        if let password = components.password {
            scrubber.registerBasicCredentials(user: components.user ?? "", password: password)
            if let raw = components.percentEncodedPassword, raw != password { scrubber.register(raw) }
        }
        let path = components.percentEncodedPath
        if path.count > 1 { scrubber.register(path) }
    }

    // MARK: - Response

    func check(_ response: HTTPResponse) throws {
        let status = response.status
        if (200..<300).contains(status) { return }
        let snippet = replySnippet(response.body)
        let what = "\(name): HTTP \(status) from \(displayURL)" + (snippet.isEmpty ? "" : ": " + snippet)
        if status == 408 || status == 429 || (500..<600).contains(status) {
            // Telegram says how long to wait in its JSON reply (`parameters.retry_after`), not in a header.
            let wait = response.header("Retry-After").flatMap { WebhookChannel.retryAfter($0, serverDate: response.header("Date")) }
                ?? (options.preset == .telegram ? WebhookChannel.telegramRetryAfter(response.body) : nil)
            throw DeliveryError.temporary(what, retryAfter: wait)
        }
        throw DeliveryError.permanent(what)
    }

    private func replySnippet(_ body: [UInt8]) -> String {
        // Scrubbed before it is cut short, so a secret that straddles the cut cannot leave half of itself.
        let text = String(decoding: body.prefix(8_192), as: UTF8.self)
        let line = scrubber.scrub(MailMessage.headerSafeValue(text))
        return String(line.prefix(160))
    }

    func classify(_ error: CurlError) -> DeliveryError {
        let what = "\(name): \(displayURL): " + scrubber.scrub(error.message)
        if error.isCertificateProblem { return .permanent(what + " (set ca_file, or insecure = true for a test server)") }
        // No connection or no answer in time: the endpoint, not this message.
        if error.isConnectionFailure || error.isTimeout { return .unavailable(what) }
        return .temporary(what)
    }

    /// `Retry-After` in seconds, from delta-seconds or an HTTP date. A date is
    /// measured against the reply's own `Date` header when it has one (the
    /// server's clock, so a skewed local clock, or a pinned `--now`, does not
    /// stretch or shrink the wait), else against this machine's clock.
    public static func retryAfter(_ value: String, serverDate: String? = nil) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds >= 0 { return seconds }
        guard let date = httpDate(trimmed) else { return nil }
        let reference = serverDate.flatMap { httpDate($0.trimmingCharacters(in: .whitespaces)) } ?? Date()
        return max(0, date.timeIntervalSince(reference))
    }

    /// RFC 9110's three HTTP-date forms.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

/// `type = "webhook"` (docs/design/channels.md): `url` or `url_env`, `preset`, `headers` (a
/// table; a value `{ env = "NAME" }` reads the environment), `body` +
/// `content_type` for a custom template, `method`, `insecure`, `ca_file`, and
/// `msgtype` for the matrix preset.
extension WebhookChannel: ChannelType {
    public enum Preset: String, Sendable, CaseIterable {
        case generic, slack, discord, mattermost, ntfy, matrix, gotify, telegram, pushover
    }

    /// A header value: literal, or read from the environment (`{ env = "NAME" }`).
    public enum HeaderValue: Sendable, Equatable {
        case literal(String)
        case environment(String)
    }

    public struct Options: Sendable {
        public enum Target: Sendable, Equatable {
            case url(String)
            case environment(String)
        }
        public var target: Target
        public var preset: Preset = .generic
        /// Sorted by header name.
        public var headers: [(name: String, value: HeaderValue)] = []
        public var body: String?
        public var contentType: String?
        public var method = "POST"
        public var insecure = false
        /// A PEM file of CA certificates to trust (a self-hosted server behind a private CA).
        public var caFile: String?
        /// The matrix preset's message type: `m.notice` (what bots send; clients
        /// show it quieter and other bots do not answer it) or `m.text`.
        public var msgtype = "m.notice"
        /// The telegram and pushover presets' keys (`bot_token`, `chat_id`, `token`, `user`, `api_url`).
        public var phone: PhoneOptions?
        /// Set when `url` was written as an Apprise URL: its scheme and request shape.
        public var apprise: AppriseURL.Target?

        public init(target: Target, preset: Preset = .generic) {
            self.target = target
            self.preset = preset
        }
    }

    public static let typeName = "webhook"

    /// An SMS gateway gets the contact's number (`"to"`) with an ask; no webhook sends mail.
    /// Telegram and Pushover cannot write to a contact: `userOnlyService` says so per table.
    public static let capabilities: ChannelCapabilities = [.reminders, .asksBySMS]

    public static let askRouteDescription = "a webhook (an SMS gateway)"

    /// "Telegram" or "Pushover" for a table that sends there (by preset or Apprise URL):
    /// they reach the user's own phone, never a contact's number.
    public static func userOnlyService(_ options: Options) -> String? {
        switch options.preset {
        case .telegram: return "Telegram"
        case .pushover: return "Pushover"
        default: return nil
        }
    }

    public static func options(from table: TableReader) throws -> Options {
        let preset = try table.choice("preset", Preset.self)
        if preset == .telegram || preset == .pushover { return try phoneOptions(from: table, preset: preset ?? .telegram) }
        let target: Options.Target
        var apprise: String?
        var phoneAPI: String?
        switch (try table.string("url"), try table.string("url_env")) {
        case (let url?, nil):
            if url.hasPrefix("https://") || url.hasPrefix("http://") {
                target = .url(url)
            } else if AppriseURL.looksLikeOne(url) {
                target = .url(url)
                apprise = url
            } else {
                throw table.problem("url", "must start with https:// or http://, or be an Apprise URL (json://, ntfy://, tgram://, …)")
            }
        case (nil, let env?):
            target = .environment(env)
            // The variable may hold an Apprise URL, read when the channel is built; api_url goes with it.
            if let api = try table.string("api_url") {
                guard api.hasPrefix("https://") || api.hasPrefix("http://") else { throw table.problem("api_url", "must start with https:// or http://") }
                phoneAPI = api
            }
        case (nil, nil): throw table.problem("url", "missing: give url or url_env")
        case (_?, _?): throw table.problem("url_env", "give url or url_env, not both")
        }
        var options = Options(target: target)
        if let preset { options.preset = preset }
        if let phoneAPI { options.phone = PhoneOptions(apiURL: phoneAPI) }
        if let apprise {
            if preset != nil { throw table.problem("preset", "an Apprise URL picks its own preset; leave preset out") }
            options.phone = PhoneOptions(apiURL: try table.string("api_url"))
            do {
                options.target = .url(try AppriseURL.apply(apprise, to: &options))
            } catch let problem as AppriseURL.Problem {
                throw table.problem("url", problem.message)
            }
        }
        if let headers = try table.table("headers") {
            for key in headers.keys.sorted() {
                if let literal = try? headers.string(key) {
                    options.headers.append((key, .literal(literal)))
                } else if let envTable = try headers.table(key) {
                    guard let env = try envTable.string("env") else {
                        throw envTable.problem("env", "missing: a header value is a string or { env = \"NAME\" }")
                    }
                    try envTable.finish()
                    options.headers.append((key, .environment(env)))
                }
            }
            try headers.finish()
        }
        options.body = try table.string("body")
        options.contentType = try table.string("content_type")
        if options.body != nil, options.contentType == nil {
            throw table.problem("content_type", "missing: a custom body needs its content type (e.g. \"application/json\")")
        }
        if let method = try table.string("method") {
            let upper = method.uppercased()
            guard ["POST", "PUT", "PATCH"].contains(upper) else {
                throw table.problem("method", "\"\(method)\" is not POST, PUT or PATCH")
            }
            options.method = upper
        }
        options.insecure = try table.bool("insecure") ?? false
        options.caFile = try table.string("ca_file")
        if let msgtype = try table.string("msgtype") {
            guard options.preset == .matrix else { throw table.problem("msgtype", "is for preset = \"matrix\" only") }
            guard ["m.notice", "m.text"].contains(msgtype) else {
                throw table.problem("msgtype", "\"\(msgtype)\" is not m.notice or m.text")
            }
            options.msgtype = msgtype
        }
        return options
    }

    public static func make(_ config: ChannelConfig, options: Options, context: ChannelContext) throws -> any NotificationChannel {
        try WebhookChannel(name: config.name, options: options, timeout: config.timeout, context: context)
    }

    /// Scheme and host only: Slack, Discord, ntfy and Gotify keep their secret in the path.
    public static func target(of options: Options, environment: [String: String]) -> String {
        let url: String
        switch options.target {
        case .url(let value):
            url = options.apprise.map { AppriseURL.display(scheme: $0.scheme, resolved: value) } ?? SecretScrubber.displayURL(value)
        case .environment(let variable):
            url = environment[variable].map(SecretScrubber.displayURL) ?? "$\(variable) (not set)"
        }
        // The matrix preset PUTs to …/send/m.room.message/<txnId>, whatever `method` says.
        let method = options.body == nil && options.preset == .matrix ? "PUT" : options.method
        let form = options.apprise != nil ? "Apprise URL" : options.body == nil ? options.preset.rawValue : "custom body"
        return "\(method) \(url) (\(form))"
    }

    /// A URL with a query or credentials, or a literal header value.
    public static func holdsInlineSecret(_ options: Options) -> Bool {
        if case .url(let url) = options.target, url.contains("?") || url.contains("@") { return true }
        if options.apprise != nil || options.phone?.token.map({ if case .literal = $0 { true } else { false } }) == true { return true }
        return options.headers.contains { if case .literal = $0.value { return true } else { return false } }
    }
}
