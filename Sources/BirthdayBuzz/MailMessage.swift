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
    var headerValue: String { headerTokens(room: MailMessage.lineLimit).joined(separator: " ") }

    /// The header form as pieces a header may be folded between: the name's
    /// (a quoted string, or encoded words) and then `<address>`. `room` is
    /// what is left of the line the first piece goes on.
    func headerTokens(room: Int) -> [String] {
        guard let name = name.map(MailMessage.headerSafeValue), !name.isEmpty else { return [address] }
        return MailMessage.encodePhrase(name, room: room) + ["<" + address + ">"]
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
        lines.append(folded("From", from.headerTokens(room: lineLimit - "From: ".count)))
        var recipients: [String] = []
        for (index, mailbox) in to.enumerated() {
            var tokens = mailbox.headerTokens(room: recipients.isEmpty ? lineLimit - "To: ".count : lineLimit - 1)
            if index < to.count - 1 { tokens[tokens.count - 1] += "," }
            recipients += tokens
        }
        lines.append(folded("To", recipients))
        lines.append(folded("Subject", encodeUnstructured(headerSafeValue(subject), room: lineLimit - "Subject: ".count)))
        lines.append(folded("Message-ID", [messageID(eventID: eventID, from: from)]))
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

    /// The line length a header is folded to (RFC 5322 §2.1.1: lines SHOULD
    /// be at most 78 characters; a server refuses one over 998).
    static let lineLimit = 78

    /// `Name: ` and the pieces, separated by single spaces and folded (RFC 5322
    /// §2.2.3: CRLF before the space) wherever the line would grow past
    /// `lineLimit`. Removing the CRLFs gives back the value with its single
    /// spaces. Each piece is at most 76 characters, so every line fits, except
    /// an address or Message-ID, which cannot be folded and is at most 300.
    static func folded(_ name: String, _ pieces: [String]) -> String {
        var out = name + ":"
        var lineLength = out.utf8.count
        for piece in pieces {
            let length = piece.utf8.count
            // Also before the first piece (`Subject:` CRLF SP …): the space after the colon is folding white space too.
            if lineLength > 0, lineLength + 1 + length > lineLimit {
                out += "\r\n"
                lineLength = 0
            }
            out += " " + piece
            lineLength += 1 + length
        }
        return out
    }

    /// A one-line header value, RFC 2047-encoded when it is not printable ASCII
    /// (HTTP headers are not folded: the words are joined by spaces).
    public static func encodedHeaderValue(_ text: String) -> String {
        encodeUnstructured(headerSafeValue(text), room: lineLimit).joined(separator: " ")
    }

    /// An unstructured header value (one line, single spaces) as pieces to fold
    /// between: its words when it is printable ASCII whose every word fits on a
    /// line of its own and nothing looks like an encoded word; else RFC 2047 `B`
    /// words for the whole text (a word of 984 letters has no place to fold).
    /// `room` is what is left of the first line.
    static func encodeUnstructured(_ text: String, room: Int) -> [String] {
        let words = text.split(separator: " ").map(String.init)
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }), !text.contains("=?"),
           words.allSatisfy({ $0.utf8.count <= lineLimit - 2 }) {
            return words
        }
        return encodedWords(text, room: room)
    }

    /// A display name: a quoted string when printable ASCII and short enough
    /// for a line, else RFC 2047 `B` words (allowed in a phrase, and folded between).
    static func encodePhrase(_ text: String, room: Int) -> [String] {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
            let quoted = "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            if quoted.utf8.count <= lineLimit - 2 { return [quoted] }
        }
        return encodedWords(text, room: room)
    }

    /// `=?UTF-8?B?…?=` words, each at most 75 characters (RFC 2047 §2) and
    /// whole UTF-8 sequences (never a character split between two words, §5).
    /// The first fits in `room` (what is left of the header's first line), the
    /// others on a line of their own after the folding space.
    static func encodedWords(_ text: String, room: Int) -> [String] {
        // "=?UTF-8?B?" + base64 + "?=": 12 characters around 4 per 3 bytes; 75 at most → 45 bytes.
        func bytesFitting(_ characters: Int) -> Int { max(6, min(45, (characters - 12) / 4 * 3)) }
        let bytes = Array(text.utf8)
        var words: [String] = []
        var start = 0
        var limit = bytesFitting(room)
        while start < bytes.count {
            var end = min(bytes.count, start + limit)
            // Back off to the start of a UTF-8 sequence (a continuation byte is 10xxxxxx).
            while end < bytes.count, end > start + 1, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            words.append("=?UTF-8?B?" + Data(bytes[start..<end]).base64EncodedString() + "?=")
            start = end
            limit = bytesFitting(lineLimit - 1)
        }
        return words
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
