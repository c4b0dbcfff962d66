import Foundation

/// The URL rules of `[health]` pings (healthchecks.io, Uptime Kuma): pure, so
/// the config loader can check them and tests can pin them.
public enum HealthPingURLs {
    /// Where a failure is reported: `fail_url` when given, else `ping_url` +
    /// `/fail` (healthchecks.io's convention; a trailing slash is not doubled).
    /// nil when `ping_url` has a query (an Uptime Kuma push URL): appending to
    /// its path cannot be guessed, so `fail_url` is required.
    public static func failURL(pingURL: String, failURL: String?) -> String? {
        if let failURL { return failURL }
        guard !pingURL.contains("?"), !pingURL.contains("#") else { return nil }
        return pingURL.hasSuffix("/") ? pingURL + "fail" : pingURL + "/fail"
    }

    /// `url` with every `{summary}` replaced by the percent-encoded summary
    /// (everything but RFC 3986's unreserved characters is encoded, so the
    /// result is safe in a path and in a query value).
    public static func substituting(_ url: String, summary: String) -> String {
        guard url.contains("{summary}") else { return url }
        return url.replacingOccurrences(of: "{summary}", with: percentEncoded(summary))
    }

    public static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return encoded
    }
}
