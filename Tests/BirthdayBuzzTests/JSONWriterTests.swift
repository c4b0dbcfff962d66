import Testing
@testable import BirthdayBuzz

@Suite struct JSONWriterTests {
    /// The escaping rules, one scalar at a time (the writer copies clean runs whole).
    static func reference(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    @Test func quotingMatchesTheRules() {
        let samples = ["", "plain", "It's \"quoted\"", "back\\slash", "a\nb\r\tc", "\u{0}\u{1F}\u{7F}", "Zoë — “fancy” €",
                       "line\u{2028}para\u{2029}end", "\u{2028}", "ends with \u{2029}", "李小龙 🎂", "\u{E2}\u{80}",
                       "x\u{2027}y\u{202A}", "\"", "\\\n"]
        for text in samples {
            #expect(JSONObject.quote(text) == Self.reference(text), "\(text.debugDescription)")
            var bytes: [UInt8] = []
            JSONObject.appendQuoted(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == Self.reference(text), "bytes: \(text.debugDescription)")
        }
    }

    @Test func genericPayloadIsTheDocumentedObject() throws {
        let date = try #require(LocalDate(year: 2027, month: 3, day: 15))
        let messages = [
            Message(kind: .reminder, id: "u1/0/2027-03-15", title: "It's \"Ann\"'s birthday", body: "Line 1\nLine 2 — ok",
                    contact: .init(id: "u1", name: "Ann \\ O'Neil"), occurrence: date, daysUntil: 0, locale: "de-AT"),
            Message(kind: .ask, id: "u2/ask/1", title: "Quick question", body: "", contact: nil, occurrence: nil,
                    daysUntil: nil, recipient: .email("a@example.org")),
            Message(id: "x", title: "", body: "\u{2028}\t"),
            // Every escape, between and at the ends of runs that need none.
            Message(id: "\u{01}a\u{1F}", title: "\r\"\\\u{7F}é\u{2029}\u{2027}", body: "🎂\u{0}\n\u{2028}x",
                    contact: .init(id: "\\", name: "\""), occurrence: nil, daysUntil: -3, locale: "\t"),
        ]
        for message in messages {
            // The field order and escaping docs/design/channels.md documents, built field by field.
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
            #expect(GenericPayload.json(message) == object.json)
        }
    }

    @Test func objectsKeepFieldOrder() {
        var object = JSONObject()
        object.add("b", "x\"y")
        object.add("a", 1)
        object.add("n", nil as String?)
        object.add("t", true)
        object.add("list", ["p", "q\n"])
        object.add("raw", raw: "{\"k\":null}")
        #expect(object.json == #"{"b":"x\"y","a":1,"n":null,"t":true,"list":["p","q\n"],"raw":{"k":null}}"#)
        #expect(JSONObject().json == "{}")
    }
}
