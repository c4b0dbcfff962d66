import BirthdayBuzz
import CurlSupport
import Foundation

/// `preset = "telegram"` (and `tgram://` URLs): `POST {api_url}/bot{token}/sendMessage`
/// with JSON `{"chat_id","text","parse_mode":"HTML"}`; a 429's `parameters.retry_after`
/// is its Retry-After; the doctor check is `getMe`.
extension WebhookChannel {
    /// `{api_url}/bot{token}/{method}`.
    func telegramEndpoint(_ method: String) -> String {
        url + "/bot" + presetToken + "/" + method
    }

    /// `{"chat_id","text","parse_mode":"HTML"}`: the title in bold, every value HTML-escaped,
    /// the text cut to Telegram's limit.
    func telegramBody(_ message: Message) -> String {
        let title = message.title
        let room = Self.telegramLimit - title.utf16.count - 1
        let body = Self.cutToLimit(message.body, limit: max(room, 0))
        var object = JSONObject()
        let chat = options.phone?.recipient ?? ""
        // A numeric chat id goes as a number, a channel name (`@name`) as a string, as Telegram documents both.
        if let number = Int(chat) { object.add("chat_id", number) } else { object.add("chat_id", chat) }
        object.add("text", "<b>" + WebhookChannel.htmlEscaped(title) + "</b>" + (body.isEmpty ? "" : "\n" + WebhookChannel.htmlEscaped(body)))
        object.add("parse_mode", "HTML")
        return object.json
    }

    /// A 429 reply's `parameters.retry_after`: Telegram's Retry-After.
    static func telegramRetryAfter(_ body: [UInt8]) -> Double? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let parameters = object["parameters"] as? [String: Any] else { return nil }
        if let seconds = parameters["retry_after"] as? Int, seconds >= 0 { return Double(seconds) }
        if let seconds = parameters["retry_after"] as? Double, seconds >= 0 { return seconds }
        return nil
    }

    /// The doctor check: `getMe` accepts the token. Sends no message.
    func validateTelegram() async throws {
        let request = HTTPRequest(url: telegramEndpoint("getMe"), method: "GET", headers: [("User-Agent", "BirthdayBuzz")],
                                  timeout: min(timeout, 5), security: TransferSecurity(insecure: options.insecure, caFile: options.caFile))
        let response = try await phoneCheck(request)
        if response.status == 401 || response.status == 404 {
            throw DeliveryError.permanent("\(name): Telegram does not accept the bot token (HTTP \(response.status) from getMe at \(displayURL)); copy it again from @BotFather")
        }
        try check(response)
    }
}
