/// A minimal JSON writer that keeps fields in the order written, so the
/// command-line JSON shapes (docs/design/command-line.md) are stable and diffable.
///
/// Fields are written straight into one buffer as they are added.
public struct JSONObject: Sendable {
    private var text = ""

    public init() {}

    private mutating func key(_ key: String) {
        if !text.isEmpty { text += "," }
        JSONObject.appendQuoted(key, to: &text)
        text += ":"
    }

    public mutating func add(_ key: String, _ value: String?) {
        self.key(key)
        if let value { JSONObject.appendQuoted(value, to: &text) } else { text += "null" }
    }

    public mutating func add(_ key: String, _ value: Int?) {
        self.key(key)
        text += value.map { String($0) } ?? "null"
    }

    public mutating func add(_ key: String, _ value: Bool?) {
        self.key(key)
        text += value.map { $0 ? "true" : "false" } ?? "null"
    }

    public mutating func add(_ key: String, _ values: [String]) {
        self.key(key)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            JSONObject.appendQuoted(value, to: &text)
        }
        text += "]"
    }

    public mutating func add(_ key: String, raw json: String) {
        self.key(key)
        text += json
    }

    public var json: String {
        "{" + text + "}"
    }

    /// A JSON array of already-encoded values, one per line for readability.
    public static func array(_ items: [String]) -> String {
        items.isEmpty ? "[]" : "[\n  " + items.joined(separator: ",\n  ") + "\n]"
    }

    /// JSON string literal with all control characters escaped.
    public static func quote(_ text: String) -> String {
        var out = ""
        appendQuoted(text, to: &out)
        return out
    }

    /// Appends `text` as a JSON string literal: control characters, U+2028 and
    /// U+2029 escaped (as `\uXXXX` unless they have a short form).
    public static func appendQuoted(_ text: String, to out: inout String) {
        out += "\""
        var text = text
        let escaped = text.withUTF8 { bytes -> Bool in
            // Runs of bytes that need no escape go in whole; 0xE2 starts U+2028/U+2029.
            var start = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                var escape: String?
                if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                    switch byte {
                    case 0x22: escape = "\\\""
                    case 0x5C: escape = "\\\\"
                    case 0x0A: escape = "\\n"
                    case 0x0D: escape = "\\r"
                    case 0x09: escape = "\\t"
                    default: escape = hexEscape(UInt32(byte))
                    }
                } else if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80,
                          bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                    escape = bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029"
                }
                guard let escape else {
                    index += 1
                    continue
                }
                if start < index { out += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) }
                out += escape
                index += byte == 0xE2 ? 3 : 1
                start = index
            }
            guard start > 0 else { return false }
            if start < bytes.count {
                out += String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self)
            }
            return true
        }
        if !escaped { out += text }
        out += "\""
    }

    /// Appends `text` as a JSON string literal to a byte buffer, escaped as the
    /// String form above escapes it (`GenericPayload` writes a webhook's body as bytes).
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
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
                case (3, _): appendBytes(bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029", to: &out)
                case (_, 0x22): appendBytes("\\\"", to: &out)
                case (_, 0x5C): appendBytes("\\\\", to: &out)
                case (_, 0x0A): appendBytes("\\n", to: &out)
                case (_, 0x0D): appendBytes("\\r", to: &out)
                case (_, 0x09): appendBytes("\\t", to: &out)
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    appendBytes("\\u00", to: &out)
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

    /// Appends a literal's UTF-8 bytes.
    static func appendBytes(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    private static func hexEscape(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
