/// The generic webhook body (DESIGN §5), also what `exec` plugins read on stdin.
///
/// `{"event","id","title","body","contact":{"id","name"},"occurrence","days_until","locale"}`
/// plus `"to"` when the message is addressed to a contact.
public enum GenericPayload {
    public static func json(_ message: Message) -> String {
        var object = JSONObject()
        object.add("event", message.kind.rawValue)
        object.add("id", message.id)
        object.add("title", message.title)
        object.add("body", message.body)
        if let contact = message.contact {
            var ref = JSONObject()
            ref.add("id", contact.id)
            ref.add("name", contact.name)
            object.add("contact", raw: ref.json)
        } else {
            object.add("contact", raw: "null")
        }
        object.add("occurrence", message.occurrence?.description)
        object.add("days_until", message.daysUntil)
        object.add("locale", message.locale)
        if let recipient = message.recipient { object.add("to", recipient.address) }
        return object.json
    }
}
