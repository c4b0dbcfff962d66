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
            JSONObject.appendBytes(name, to: &out)
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ":"))
            if let value { JSONObject.appendQuoted(value, to: &out) } else { JSONObject.appendBytes("null", to: &out) }
        }
        out.append(UInt8(ascii: "{"))
        field("event", message.kind.rawValue)
        field("id", message.id)
        field("title", message.title)
        field("body", message.body)
        if let contact = message.contact {
            JSONObject.appendBytes(",\"contact\":{", to: &out)
            field("id", contact.id)
            field("name", contact.name)
            out.append(UInt8(ascii: "}"))
        } else {
            field("contact", nil)
        }
        field("occurrence", message.occurrence?.description)
        JSONObject.appendBytes(",\"days_until\":", to: &out)
        if let days = message.daysUntil { out.append(contentsOf: String(days).utf8) } else { JSONObject.appendBytes("null", to: &out) }
        field("locale", message.locale)
        if let recipient = message.recipient { field("to", recipient.address) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
