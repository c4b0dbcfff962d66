import BirthdayBuzz
import Foundation

/// Apprise URLs in a webhook's `url`, so a user can paste what already works
/// with Apprise. The scheme picks the preset; the request uses Apprise's
/// method, URL, credential placement and the keys that carry the target,
/// title and body, without Apprise's branding (its user name, icons, footers)
/// and with our own mention defusing and urgency mapping.
///
/// | scheme | request |
/// |---|---|
/// | `json://[user:pass@]HOST[:PORT][/PATH]` | POST JSON `{"version","title","message","type"}`, basic auth |
/// | `ntfy://[user:pass@]HOST[:PORT]/TOPIC`, `ntfy://TOPIC` (ntfy.sh) | POST JSON `{"topic","title","message"}` to the host's root |
/// | `gotify://HOST[:PORT][/PATH]/TOKEN` | POST `{PATH}/message`, `X-Gotify-Key: TOKEN`, JSON `{"title","message","priority"}` |
/// | `mmost://[bot@]HOST[:PORT][/PATH]/TOKEN` | POST `:PORT{PATH}/hooks/TOKEN` (port 8065 unless given), JSON `{"text"}` |
/// | `discord://[bot@]ID/TOKEN` | POST `https://discord.com/api/webhooks/ID/TOKEN`, JSON `{"content"}` (the discord preset) |
/// | `slack://[bot@]A/B/C` | POST `https://hooks.slack.com/services/A/B/C`, JSON `{"attachments":[{"title","text"}]}` |
/// | `tgram://BOTID:SECRET/CHAT_ID` | the telegram preset |
/// | `pover://USER@TOKEN[/DEVICE]` | the pushover preset |
///
/// The `s` forms (`jsons`, `ntfys`, `gotifys`, `mmosts`) use https. One target
/// per URL; a query parameter is not read, so any is a config error (better
/// than a setting that silently does nothing). Discord, Slack, Telegram,
/// Pushover and ntfy.sh have a host Apprise fixes: the channel's `api_url`
/// replaces it.
public enum AppriseURL {
    /// What the channel keeps of an Apprise URL.
    public struct Target: Sendable, Equatable {
        /// The scheme as written (`tgram`), for display: `tgram://api.telegram.org`.
        public var scheme: String
        public var shape: Shape
    }

    /// The request bodies that none of the webhook presets makes.
    public enum Shape: Sendable, Equatable {
        case json
        case ntfy(topic: String)
        case slack
        /// Made by the preset the scheme maps to (gotify, mattermost, telegram, pushover).
        case preset
    }

    /// A URL that cannot be used, in words for the config error.
    public struct Problem: Error, Sendable {
        public var message: String
    }

    public static let schemes = ["json", "jsons", "ntfy", "ntfys", "gotify", "gotifys", "mmost", "mmosts",
                                 "discord", "slack", "tgram", "pover"]

    /// Something with a scheme that is not http(s): parsed (and refused when unknown) as an Apprise URL.
    static func looksLikeOne(_ url: String) -> Bool {
        guard let end = url.range(of: "://") else { return false }
        let scheme = url[..<end.lowerBound]
        return !scheme.isEmpty && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// Sets the preset, headers and phone keys for `url` in `options`; returns the http(s) URL to send to.
    /// `options.phone?.apiURL`, when set, replaces a host that Apprise fixes.
    static func apply(_ url: String, to options: inout WebhookChannel.Options) throws -> String {
        guard let end = url.range(of: "://") else { throw Problem(message: "not a URL") }
        let scheme = url[..<end.lowerBound].lowercased()
        guard schemes.contains(scheme) else {
            throw Problem(message: "\"\(scheme)://\" is not an Apprise scheme BirthdayBuzz reads (it reads \(schemes.map { $0 + "://" }.joined(separator: ", "))); for any other service use type = \"exec\" with command = [\"apprise\", …]")
        }
        var rest = String(url[end.upperBound...])
        if let hash = rest.firstIndex(of: "#") { rest = String(rest[..<hash]) }
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = String(rest[..<question])
            if let first = query.split(separator: "&").first(where: { !$0.isEmpty }) {
                let key = first.split(separator: "=", maxSplits: 1).first.map(String.init) ?? String(first)
                throw Problem(message: "query parameter \"\(key.removingPercentEncoding ?? key)\" is not read by BirthdayBuzz; remove it (urgency comes from the message, branding is left out)")
            }
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = String(rest[..<slash])
        let segments = rest[slash...].split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        var userinfo: String?
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            authority = String(authority[authority.index(after: at)...])
        }
        let http = ["jsons", "ntfys", "gotifys", "mmosts"].contains(scheme) ? "https://" : "http://"
        let fixedHost = options.phone?.apiURL.map(WebhookChannel.trimmedAPI)
        func credentials() -> String { userinfo.map { $0 + "@" } ?? "" }
        func needHost() throws {
            if authority.isEmpty { throw Problem(message: "\(scheme):// needs a host") }
        }
        func noFixedHost() throws {
            if fixedHost != nil { throw Problem(message: "api_url is for the services whose host Apprise fixes; \(scheme):// names its host") }
        }
        options.apprise = Target(scheme: scheme, shape: .preset)
        switch scheme {
        case "json", "jsons":
            try needHost(); try noFixedHost()
            options.apprise?.shape = .json
            return http + credentials() + authority + (segments.isEmpty ? "/" : "/" + segments.map(WebhookChannel.percentEncodePathSegment).joined(separator: "/"))
        case "ntfy", "ntfys":
            try needHost()
            // `ntfy://TOPIC` (or `ntfy://ntfy.sh/TOPIC`) is ntfy.sh; `ntfy://HOST/TOPIC` a server of one's own.
            if segments.isEmpty || authority.lowercased() == "ntfy.sh" {
                let topic = segments.isEmpty ? authority : segments[0]
                guard segments.count <= 1 else { throw Problem(message: "one topic per URL") }
                if userinfo != nil { throw Problem(message: "ntfy.sh topics take no user:password here") }
                options.apprise?.shape = .ntfy(topic: topic)
                return (fixedHost ?? "https://ntfy.sh") + "/"
            }
            try noFixedHost()
            guard segments.count == 1 else { throw Problem(message: "one topic per URL (ntfy://HOST/TOPIC)") }
            options.apprise?.shape = .ntfy(topic: segments[0])
            return http + credentials() + authority + "/"
        case "gotify", "gotifys":
            try needHost(); try noFixedHost()
            guard let token = segments.last else { throw Problem(message: "gotify://HOST/TOKEN needs the application token") }
            options.preset = .gotify
            options.headers.append((name: "X-Gotify-Key", value: .literal(token)))
            let path = segments.dropLast().map(WebhookChannel.percentEncodePathSegment)
            return http + authority + "/" + path.map { $0 + "/" }.joined() + "message"
        case "mmost", "mmosts":
            // The bot name before `@` is Apprise's display name (branding): not sent.
            try needHost(); try noFixedHost()
            guard let token = segments.last else { throw Problem(message: "mmost://HOST/TOKEN needs the webhook token") }
            options.preset = .mattermost
            let hostPort = authority.contains(":") ? authority : authority + ":8065"
            let path = segments.dropLast().map(WebhookChannel.percentEncodePathSegment)
            return http + hostPort + path.map { "/" + $0 }.joined() + "/hooks/" + WebhookChannel.percentEncodePathSegment(token)
        case "discord":
            guard !authority.isEmpty, segments.count == 1 else { throw Problem(message: "write discord://WEBHOOK_ID/WEBHOOK_TOKEN (one webhook per URL)") }
            // Apprise writes title and body into `content` (embeds only with ?format=markdown): the discord preset.
            options.preset = .discord
            return (fixedHost ?? "https://discord.com") + "/api/webhooks/" + [authority, segments[0]].map(WebhookChannel.percentEncodePathSegment).joined(separator: "/")
        case "slack":
            guard !authority.isEmpty, segments.count == 2, !authority.hasPrefix("xo") else {
                throw Problem(message: "write slack://TOKEN_A/TOKEN_B/TOKEN_C, an incoming webhook (one per URL; bot tokens and channels are not read)")
            }
            options.apprise?.shape = .slack
            return (fixedHost ?? "https://hooks.slack.com") + "/services/" + ([authority] + segments).map(WebhookChannel.percentEncodePathSegment).joined(separator: "/")
        case "tgram":
            // The bot token holds a colon: `BOTID:SECRET` is the token, not a host and a port (as Apprise reads it).
            var token = authority
            if token.lowercased().hasPrefix("bot"), token.dropFirst(3).first?.isNumber == true { token = String(token.dropFirst(3)) }
            token = token.replacingOccurrences(of: "%3A", with: ":").replacingOccurrences(of: "%3a", with: ":")
            var chats = segments
            if !token.contains(":"), let second = chats.first {  // `tgram://BOTID/SECRET/CHAT` after a %2F or a stray slash
                token += ":" + second
                chats.removeFirst()
            }
            let parts = token.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].allSatisfy(\.isNumber), !parts[1].isEmpty else {
                throw Problem(message: "write tgram://BOT_TOKEN/CHAT_ID (the bot token as @BotFather gives it, 123456:ABC…)")
            }
            guard chats.count == 1 else { throw Problem(message: "one chat id per URL (tgram://BOT_TOKEN/CHAT_ID)") }
            options.preset = .telegram
            options.phone = WebhookChannel.PhoneOptions(token: .literal(token), recipient: chats[0], apiURL: fixedHost)
            return fixedHost ?? WebhookChannel.telegramAPI
        case "pover":
            guard let user = userinfo, !user.isEmpty, !authority.isEmpty else {
                throw Problem(message: "write pover://USER_KEY@APP_TOKEN")
            }
            guard segments.count <= 1 else { throw Problem(message: "one device per URL (pover://USER_KEY@APP_TOKEN/DEVICE)") }
            options.preset = .pushover
            options.phone = WebhookChannel.PhoneOptions(token: .literal(authority), recipient: user, device: segments.first,
                                                        apiURL: fixedHost)
            return fixedHost ?? WebhookChannel.pushoverAPI
        default:
            throw Problem(message: "\"\(scheme)://\" is not read")
        }
    }

    /// `scheme://host`: how an Apprise URL is shown (its own host part may be a token, as in `pover://USER@TOKEN`).
    static func display(scheme: String, resolved url: String) -> String {
        let shown = SecretScrubber.displayURL(url)
        guard let end = shown.range(of: "://") else { return scheme + "://" }
        return scheme + "://" + shown[end.upperBound...]
    }
}

extension WebhookChannel {
    /// The body (and extra headers) of an Apprise shape that no preset makes; nil for `.preset`.
    func appriseBody(_ message: Message, shape: AppriseURL.Shape) -> (body: String, headers: [(name: String, value: String)])? {
        var object = JSONObject()
        switch shape {
        case .json:
            object.add("version", "1.0")
            object.add("title", message.title)
            object.add("message", message.body)
            object.add("type", message.urgency == .critical ? "warning" : "info")
            return (object.json, [])
        case .ntfy(let topic):
            object.add("topic", topic)
            object.add("title", message.title)
            object.add("message", message.body.isEmpty ? message.title : message.body)
            // Apprise sends a priority only when it is not the default.
            let priority: [(name: String, value: String)] = message.urgency == .critical ? [("X-Priority", "5")]
                : message.urgency == .low ? [("X-Priority", "2")] : []
            return (object.json, priority)
        case .slack:
            var attachment = JSONObject()
            attachment.add("title", WebhookChannel.slackEscaped(message.title))
            attachment.add("text", WebhookChannel.slackEscaped(message.body))
            object.add("attachments", raw: "[" + attachment.json + "]")
            return (object.json, [])
        case .preset:
            return nil
        }
    }
}
