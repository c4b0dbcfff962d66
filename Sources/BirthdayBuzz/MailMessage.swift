import Foundation

/// A mailbox: an optional display name and a plain addr-spec.
public struct Mailbox: Sendable, Hashable, CustomStringConvertible {
    public var name: String?
    public var address: String

    /// Parses `me@example.org` or `Name <me@example.org>`; nil unless the address is
    /// a plain addr-spec (no white space, `<`, `>`, `?`, `&`, quotes or control characters).
    public init?(_ text: String) {
        let trimmed = text.trimmingWhitespace()
        if let open = trimmed.lastIndex(of: "<"), trimmed.hasSuffix(">") {
            let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            var name = trimmed[..<open].trimmingWhitespace()
            if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 { name = String(name.dropFirst().dropLast()) }
            guard Mailbox.isPlainAddress(address) else { return nil }
            self.address = address
            self.name = name.isEmpty ? nil : name
        } else {
            guard Mailbox.isPlainAddress(trimmed) else { return nil }
            address = trimmed
            name = nil
        }
    }

    public init?(name: String?, address: String) {
        guard Mailbox.isPlainAddress(address) else { return nil }
        self.name = name
        self.address = address
    }

    /// A plain addr-spec: one `@`, a non-empty local part and a dotted domain, no
    /// white space or characters that could change a header or a `mailto:` link.
    public static func isPlainAddress(_ text: String) -> Bool {
        let forbidden = Set("<>?&\"(),;:\\[] \t\r\n")
        guard !text.isEmpty, text.count <= 254, !text.contains(where: { forbidden.contains($0) || $0.isWhitespace }),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let domain = parts[1]
        return domain.contains(".") && !domain.hasPrefix(".") && !domain.hasSuffix(".") && !domain.contains("..")
            || domain == "localhost"
    }

    public var description: String { name.map { "\($0) <\(address)>" } ?? address }

    /// The header form: the name as a quoted string or RFC 2047 encoded word.
    var headerValue: String {
        guard let name = name.map(MailMessage.headerSafeValue), !name.isEmpty else { return address }
        return MailMessage.encodePhrase(name) + " <" + address + ">"
    }
}

/// Builds RFC 5322 messages: UTF-8 text bodies, RFC 2047 subjects and names,
/// and header values that can never start a new header line.
public enum MailMessage {
    /// The bytes of a message for one recipient (CRLF line ends).
    ///
    /// - Parameters:
    ///   - messageID: the id-left part is derived from the event id, so the
    ///     same event always gets the same Message-ID.
    ///   - autoSubmitted: a message no person sent by hand (a reminder) says so
    ///     with `Auto-Submitted: auto-generated` (RFC 3834), so vacation
    ///     responders and other robots do not answer it.
    public static func compose(from: Mailbox, to: Mailbox, subject: String, body: String, eventID: String,
                               date: Date, autoSubmitted: Bool = false) -> [UInt8] {
        compose(from: from, to: [to], subject: subject, body: body, eventID: eventID, date: date, autoSubmitted: autoSubmitted)
    }

    /// One message to every mailbox of `to` (one `To:` header, addresses comma-separated).
    public static func compose(from: Mailbox, to: [Mailbox], subject: String, body: String, eventID: String,
                               date: Date, autoSubmitted: Bool = false) -> [UInt8] {
        var lines: [String] = []
        lines.append("Date: " + rfc5322Date(date))
        lines.append("From: " + from.headerValue)
        lines.append("To: " + to.map(\.headerValue).joined(separator: ", "))
        lines.append("Subject: " + encodeUnstructured(headerSafeValue(subject)))
        lines.append("Message-ID: " + messageID(eventID: eventID, from: from))
        if autoSubmitted { lines.append("Auto-Submitted: auto-generated") }
        lines.append("MIME-Version: 1.0")
        lines.append("Content-Type: text/plain; charset=utf-8")
        let normalized = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        let textLines = normalized.split(separator: "\n", omittingEmptySubsequences: false)
        let bodyLines: [String]
        if !normalized.unicodeScalars.allSatisfy({ $0.isASCII }) {
            // RFC 2045 §6.8: text is base64-encoded in its canonical form, CRLF line breaks.
            lines.append("Content-Transfer-Encoding: base64")
            let encoded = Data(textLines.joined(separator: "\r\n").utf8).base64EncodedString()
            bodyLines = stride(from: 0, to: encoded.count, by: 76).map { start in
                let from = encoded.index(encoded.startIndex, offsetBy: start)
                let to = encoded.index(from, offsetBy: min(76, encoded.count - start))
                return String(encoded[from..<to])
            }
        } else if textLines.allSatisfy({ $0.utf8.count <= 78 && !($0.last?.isWhitespace ?? false) }) {
            lines.append("Content-Transfer-Encoding: 7bit")
            bodyLines = textLines.map(String.init)
        } else {
            // A long line (RFC 5322: at most 998 octets, should be 78) or trailing
            // white space, which transports strip: quoted-printable keeps both intact.
            lines.append("Content-Transfer-Encoding: quoted-printable")
            bodyLines = quotedPrintable(textLines)
        }
        lines.append("")
        lines.append(contentsOf: bodyLines)
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// RFC 2045 §6.7 quoted-printable lines (CRLF breaks are the text's own; `=`
    /// at a line's end is a soft break), each at most 76 characters.
    static func quotedPrintable(_ textLines: [Substring]) -> [String] {
        var out: [String] = []
        for line in textLines {
            let bytes = Array(line.utf8)
            var current = ""
            for (index, byte) in bytes.enumerated() {
                let literal = (33...126).contains(byte) && byte != UInt8(ascii: "=")
                    || ((byte == 0x20 || byte == 0x09) && index < bytes.count - 1)
                let token = literal ? String(UnicodeScalar(byte)) : "=" + hexByte(byte)
                if current.utf8.count + token.utf8.count > 75 {
                    out.append(current + "=")
                    current = ""
                }
                current += token
            }
            out.append(current)
        }
        return out
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// `<hex@domain>` from the event id: stable across retries and crashes.
    public static func messageID(eventID: String, from: Mailbox) -> String {
        let domain = from.address.split(separator: "@").last.map(String.init) ?? "birthdaybuzz.invalid"
        return "<" + SHA256.hex(Array(eventID.utf8)).prefix(32) + ".buzz@" + domain + ">"
    }

    /// A header value for any protocol (HTTP too), or any text shown on one line:
    /// every control character (CR and LF above all) becomes a space.
    public static func headerSafeValue(_ text: String) -> String {
        OneLine.collapsed(text)
    }

    /// A one-line header value, RFC 2047-encoded when it is not printable ASCII.
    public static func encodedHeaderValue(_ text: String) -> String {
        encodeUnstructured(headerSafeValue(text)).replacingOccurrences(of: "\r\n ", with: " ")
    }

    /// An unstructured header value: as is when printable ASCII, else RFC 2047 `B` words.
    static func encodeUnstructured(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return text }
        return encodedWords(text)
    }

    /// A display name: a quoted string when ASCII, else RFC 2047 `B` words.
    static func encodePhrase(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
            return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return encodedWords(text)
    }

    /// `=?UTF-8?B?…?=` words of at most 75 characters, split between characters
    /// (never inside a UTF-8 sequence), joined by folding white space.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        // 75 - len("=?UTF-8?B??=") = 63 base64 characters → 45 bytes.
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk.removeAll()
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=") }
        return words.joined(separator: "\r\n ")
    }

    /// `Mon, 23 Nov 2026 09:00:00 +0000`.
    public static func rfc5322Date(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let day = LocalDate(daysSinceEpoch: days)
        let second = Int(seconds - Int64(days) * 86_400)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((days % 7) + 7) % 7]
        return "\(weekday), \(day.day) \(months[day.month - 1]) \(day.year) " + pad(second / 3_600, 2) + ":"
            + pad(second / 60 % 60, 2) + ":" + pad(second % 60, 2) + " +0000"
    }
}
