import BirthdayBuzz
import CurlSupport
import Foundation

/// The phone presets of the webhook channel: `preset = "telegram"` (a bot's
/// `sendMessage`) and `preset = "pushover"` (`1/messages.json`). Both carry
/// reminders, digests and notices to the user; neither can write to a
/// contact's phone number, so the config loader refuses them as an ask route.
extension WebhookChannel {
    /// The keys of the telegram and pushover presets.
    public struct PhoneOptions: Sendable, Equatable {
        /// `bot_token` / `bot_token_env` (telegram), `token` / `token_env` (pushover).
        public var token: HeaderValue?
        /// `chat_id` (telegram) or `user` (pushover).
        public var recipient: String?
        /// Pushover's optional device (from a `pover://USER@TOKEN/DEVICE` URL).
        public var device: String?
        /// `api_url`: the service's own host unless given (a self-hosted gateway, a test server).
        public var apiURL: String?

        public init(token: HeaderValue? = nil, recipient: String? = nil, device: String? = nil, apiURL: String? = nil) {
            self.token = token
            self.recipient = recipient
            self.device = device
            self.apiURL = apiURL
        }
    }

    static let telegramAPI = "https://api.telegram.org"
    static let pushoverAPI = "https://api.pushover.net"
    /// Telegram's limit on a message's text (after its HTML is parsed).
    static let telegramLimit = 4_096
    /// Pushover's limits on `message` and `title`.
    static let pushoverLimit = 1_024
    static let pushoverTitleLimit = 250

    /// Reads a `preset = "telegram"` or `"pushover"` table.
    static func phoneOptions(from table: TableReader, preset: Preset) throws -> Options {
        let telegram = preset == .telegram
        let tokenKey = telegram ? "bot_token" : "token"
        let recipientKey = telegram ? "chat_id" : "user"
        for key in ["url", "url_env"] where try table.string(key) != nil {
            throw table.problem(key, "the \(preset.rawValue) preset takes api_url (default \(telegram ? telegramAPI : pushoverAPI)), not \(key)")
        }
        let token: HeaderValue
        switch (try table.string(tokenKey), try table.string(tokenKey + "_env")) {
        case (let literal?, nil): token = .literal(literal)
        case (nil, let env?): token = .environment(env)
        case (nil, nil): throw table.problem(tokenKey, "missing: give \(tokenKey) or \(tokenKey)_env")
        case (_?, _?): throw table.problem(tokenKey + "_env", "give \(tokenKey) or \(tokenKey)_env, not both")
        }
        // A chat id is a number (a negative one for a group) or "@channelname"; TOML may hold either.
        let recipient = try (try? table.int(recipientKey)).map(String.init) ?? table.string(recipientKey)
        guard let recipient, !recipient.isEmpty else { throw table.problem(recipientKey, "missing") }
        let api = try table.string("api_url")
        if let api, !(api.hasPrefix("https://") || api.hasPrefix("http://")) {
            throw table.problem("api_url", "must start with https:// or http://")
        }
        var options = Options(target: .url(trimmedAPI(api ?? (telegram ? telegramAPI : pushoverAPI))), preset: preset)
        options.phone = PhoneOptions(token: token, recipient: recipient, apiURL: api)
        options.insecure = try table.bool("insecure") ?? false
        options.caFile = try table.string("ca_file")
        return options
    }

    static func trimmedAPI(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// The preset's token, read from the file or the environment and registered as a secret.
    static func resolvePresetToken(_ options: Options, name: String, context: ChannelContext) throws -> String {
        guard let source = options.phone?.token else { return "" }
        let token: String
        switch source {
        case .literal(let value): token = value
        case .environment(let variable):
            guard let value = context.environment[variable], !value.isEmpty else {
                throw ChannelSetupError(message: "\(name): \(options.preset == .telegram ? "bot_token_env" : "token_env") names \(variable), which is not set")
            }
            token = value
        }
        context.scrubber.register(token)
        // The Pushover user key is not the application's secret, but it is the user's address: keep it out of text too.
        if options.preset == .pushover, let user = options.phone?.recipient { context.scrubber.register(user) }
        return token
    }

    // MARK: - Shared

    func phoneCheck(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await session.http(request)
        } catch let error as CurlError {
            throw classify(error)
        }
    }

    /// A body cut to `limit` UTF-16 units at a line boundary, ending "… and N more"
    /// (N: the non-empty lines left out), so a long digest or notice is shortened,
    /// never refused. A first line longer than the limit is cut inside the line.
    static func cutToLimit(_ text: String, limit: Int) -> String {
        if text.utf16.count <= limit { return text }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var kept = 0
        var length = 0
        func suffix(_ omitted: Int) -> String { "… and \(omitted) more" }
        func omittedCount(from index: Int) -> Int { lines[index...].filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count }
        while kept < lines.count {
            let next = length + (kept == 0 ? 0 : 1) + lines[kept].utf16.count
            let tail = suffix(omittedCount(from: min(kept + 1, lines.count)))
            if next + 1 + tail.utf16.count > limit { break }
            length = next
            kept += 1
        }
        // Drop trailing blank lines of the kept part so the suffix follows text.
        var head = Array(lines[..<kept])
        while let last = head.last, last.trimmingCharacters(in: .whitespaces).isEmpty { head.removeLast() }
        let tail = suffix(omittedCount(from: kept))
        if head.isEmpty {
            var first = ""
            for character in text where character != "\n" {
                if first.utf16.count + String(character).utf16.count + 1 + tail.utf16.count > limit { break }
                first.append(character)
            }
            return first + "\n" + tail
        }
        return head.joined(separator: "\n") + "\n" + tail
    }
}
