/// The generic webhook body (docs/design/channels.md), also what `exec` plugins read on stdin.
///
/// `{"event","id","title","body","contact":{"id","name"},"occurrence","days_until","locale"}`
/// plus `"to"` when the message is addressed to a contact.
public enum GenericPayload {
    public static func json(_ message: Message) -> String {
        // Written straight into one buffer (one per delivery on the hot path); the
        // same bytes JSONObject would produce.
        var out = ""
        out.reserveCapacity(160 + message.id.utf8.count * 2 + message.title.utf8.count + message.body.utf8.count
                            + (message.contact?.name.utf8.count ?? 0))
        /// `"name":value` (a JSON string, or null), after a comma unless it opens the object.
        func field(_ name: String, _ value: String?) {
            out += out.utf8.last == UInt8(ascii: "{") ? "\"" : ",\""
            out += name
            out += "\":"
            if let value { JSONObject.appendQuoted(value, to: &out) } else { out += "null" }
        }
        out += "{"
        field("event", message.kind.rawValue)
        field("id", message.id)
        field("title", message.title)
        field("body", message.body)
        if let contact = message.contact {
            out += ",\"contact\":{"
            field("id", contact.id)
            field("name", contact.name)
            out += "}"
        } else {
            field("contact", nil)
        }
        field("occurrence", message.occurrence?.description)
        out += ",\"days_until\":" + (message.daysUntil.map { String($0) } ?? "null")
        field("locale", message.locale)
        if let recipient = message.recipient { field("to", recipient.address) }
        out += "}"
        return out
    }
}
