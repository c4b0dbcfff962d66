/// The generic webhook body (docs/design/channels.md), also what `exec` plugins read on stdin.
///
/// `{"event","id","title","body","contact":{"id","name"},"occurrence","days_until","locale"}`
/// plus `"to"` when the message is addressed to a contact.
public enum GenericPayload {
    public static func json(_ message: Message) -> String {
        String(decoding: bytes(message), as: UTF8.self)
    }

    /// The body as UTF-8 bytes, written straight into one byte buffer: a
    /// webhook sends these bytes as they are. (Built as a String with `+=`,
    /// it was ~6 % of the CPU of a tick delivering 10,000 reminders.)
    public static func bytes(_ message: Message) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + message.id.utf8.count * 2 + message.title.utf8.count + message.body.utf8.count
                            + (message.contact?.name.utf8.count ?? 0))
        /// `"name":value` (a JSON string, or null), after a comma unless it opens the object.
        func field(_ name: StaticString, _ value: String?) {
            if out.last != UInt8(ascii: "{") { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            append(name, to: &out)
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ":"))
            if let value { appendQuoted(value, to: &out) } else { append("null", to: &out) }
        }
        out.append(UInt8(ascii: "{"))
        field("event", message.kind.rawValue)
        field("id", message.id)
        field("title", message.title)
        field("body", message.body)
        if let contact = message.contact {
            append(",\"contact\":{", to: &out)
            field("id", contact.id)
            field("name", contact.name)
            out.append(UInt8(ascii: "}"))
        } else {
            field("contact", nil)
        }
        field("occurrence", message.occurrence?.description)
        append(",\"days_until\":", to: &out)
        if let days = message.daysUntil { out.append(contentsOf: String(days).utf8) } else { append("null", to: &out) }
        field("locale", message.locale)
        if let recipient = message.recipient { field("to", recipient.address) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// `text` as a JSON string literal, escaped as `JSONObject.appendQuoted`
    /// escapes it: `"` and the backslash, control characters (short forms for
    /// newline, return and tab, else `u00XX`), U+2028 and U+2029.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                let width: Int
                if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                    width = 1
                } else if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80,
                          bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                    width = 3
                } else {
                    index += 1
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                switch (width, byte) {
                case (3, _): append(bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029", to: &out)
                case (_, 0x22): append("\\\"", to: &out)
                case (_, 0x5C): append("\\\\", to: &out)
                case (_, 0x0A): append("\\n", to: &out)
                case (_, 0x0D): append("\\r", to: &out)
                case (_, 0x09): append("\\t", to: &out)
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    append("\\u00", to: &out)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                }
                index += width
                start = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
