/// The generic webhook body (DESIGN §5), also what `exec` plugins read on stdin.
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
        out += "{\"event\":"
        JSONObject.appendQuoted(message.kind.rawValue, to: &out)
        out += ",\"id\":"
        JSONObject.appendQuoted(message.id, to: &out)
        out += ",\"title\":"
        JSONObject.appendQuoted(message.title, to: &out)
        out += ",\"body\":"
        JSONObject.appendQuoted(message.body, to: &out)
        if let contact = message.contact {
            out += ",\"contact\":{\"id\":"
            JSONObject.appendQuoted(contact.id, to: &out)
            out += ",\"name\":"
            JSONObject.appendQuoted(contact.name, to: &out)
            out += "}"
        } else {
            out += ",\"contact\":null"
        }
        out += ",\"occurrence\":"
        if let occurrence = message.occurrence { JSONObject.appendQuoted(occurrence.description, to: &out) } else { out += "null" }
        out += ",\"days_until\":"
        out += message.daysUntil.map { String($0) } ?? "null"
        out += ",\"locale\":"
        JSONObject.appendQuoted(message.locale, to: &out)
        if let recipient = message.recipient {
            out += ",\"to\":"
            JSONObject.appendQuoted(recipient.address, to: &out)
        }
        out += "}"
        return out
    }
}
