import BirthdayBuzz
import CurlSupport
import Foundation

/// `preset = "pushover"` (and `pover://` URLs): `POST {api_url}/1/messages.json` with
/// form fields `token`, `user`, `title`, `message`, `priority`; the doctor check is
/// `users/validate.json`.
extension WebhookChannel {
    /// `{api_url}/1/{endpoint}`.
    func pushoverEndpoint(_ endpoint: String) -> String {
        url + "/1/" + endpoint
    }

    /// Form fields `token`, `user`, `title`, `message` (cut to Pushover's limit), `priority`.
    func pushoverBody(_ message: Message) -> String {
        let priority = message.urgency == .critical ? "1" : message.urgency == .low ? "-1" : "0"
        var fields = [("token", presetToken), ("user", options.phone?.recipient ?? ""),
                      ("title", String(message.title.prefix(Self.pushoverTitleLimit))),
                      ("message", Self.cutToLimit(message.body.isEmpty ? message.title : message.body, limit: Self.pushoverLimit)),
                      ("priority", priority)]
        if let device = options.phone?.device { fields.append(("device", device)) }
        return fields.map { $0.0 + "=" + WebhookChannel.formEncode($0.1) }.joined(separator: "&")
    }

    /// The doctor check: `users/validate.json` accepts the token and the user key. Sends no message.
    func validatePushover() async throws {
        var fields = [("token", presetToken), ("user", options.phone?.recipient ?? "")]
        if let device = options.phone?.device { fields.append(("device", device)) }
        let body = fields.map { $0.0 + "=" + WebhookChannel.formEncode($0.1) }.joined(separator: "&")
        let request = HTTPRequest(url: pushoverEndpoint("users/validate.json"), method: "POST",
                                  headers: [("User-Agent", "BirthdayBuzz"), ("Content-Type", "application/x-www-form-urlencoded")],
                                  body: Array(body.utf8), timeout: min(timeout, 5),
                                  security: TransferSecurity(insecure: options.insecure, caFile: options.caFile))
        let response = try await phoneCheck(request)
        if response.status == 400 || response.status == 401 || response.status == 403 {
            let errors = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["errors"] as? [String] ?? []
            let why = scrubber.scrub(MailMessage.headerSafeValue(errors.joined(separator: "; ")))
            throw DeliveryError.permanent("\(name): Pushover does not accept the token and user (HTTP \(response.status) from users/validate.json at \(displayURL)\(why.isEmpty ? "" : ": " + String(why.prefix(160))))")
        }
        try check(response)
    }
}
