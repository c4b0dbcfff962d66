/// A minimal JSON writer that keeps fields in the order written, so the
/// command-line JSON shapes (DESIGN §4) are stable and diffable.
public struct JSONObject: Sendable {
    private var fields: [(String, String)] = []

    public init() {}

    public mutating func add(_ key: String, _ value: String?) {
        fields.append((key, value.map(JSONObject.quote) ?? "null"))
    }

    public mutating func add(_ key: String, _ value: Int?) {
        fields.append((key, value.map { String($0) } ?? "null"))
    }

    public mutating func add(_ key: String, _ value: Bool?) {
        fields.append((key, value.map { $0 ? "true" : "false" } ?? "null"))
    }

    public mutating func add(_ key: String, _ values: [String]) {
        fields.append((key, "[" + values.map(JSONObject.quote).joined(separator: ",") + "]"))
    }

    public mutating func add(_ key: String, raw json: String) {
        fields.append((key, json))
    }

    public var json: String {
        "{" + fields.map { JSONObject.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// A JSON array of already-encoded values, one per line for readability.
    public static func array(_ items: [String]) -> String {
        items.isEmpty ? "[]" : "[\n  " + items.joined(separator: ",\n  ") + "\n]"
    }

    /// JSON string literal with all control characters escaped.
    public static func quote(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
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
}
