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
