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
        let escaped = text.withUTF8 { bytes in
            forEachEscapedPiece(of: bytes) { out += String(decoding: $0, as: UTF8.self) }
        }
        if !escaped { out += text }
        out += "\""
    }

    /// The same, appended to a byte buffer (`GenericPayload` writes a webhook's body as bytes).
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            if !forEachEscapedPiece(of: bytes, { out.append(contentsOf: $0) }) { out.append(contentsOf: bytes) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Hands `bytes` (UTF-8) to `emit` escaped, in pieces: runs that need no
    /// escape whole, and each escape's text. Returns false, having emitted
    /// nothing, when nothing needs an escape (the caller appends the text as it is).
    private static func forEachEscapedPiece(of bytes: UnsafeBufferPointer<UInt8>,
                                            _ emit: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        var start = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            var width = 1
            let escape: StaticString?
            switch byte {
            case 0x22: escape = "\\\""
            case 0x5C: escape = "\\\\"
            case 0x0A: escape = "\\n"
            case 0x0D: escape = "\\r"
            case 0x09: escape = "\\t"
            case ..<0x20: escape = nil  // \u00XX, below
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80
                            && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                // U+2028 and U+2029 (E2 80 A8, E2 80 A9).
                width = 3
                escape = bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029"
            default:
                index += 1
                continue
            }
            if start < index { emit(UnsafeBufferPointer(rebasing: bytes[start..<index])) }
            if let escape {
                escape.withUTF8Buffer(emit)
            } else {
                let digits: StaticString = "0123456789abcdef"
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6) { text in
                    _ = text.initialize(from: "\\u00".utf8)
                    text[4] = digits.utf8Start[Int(byte >> 4)]
                    text[5] = digits.utf8Start[Int(byte & 0x0F)]
                    emit(UnsafeBufferPointer(text))
                }
            }
            index += width
            start = index
        }
        guard start > 0 else { return false }
        if start < bytes.count { emit(UnsafeBufferPointer(rebasing: bytes[start...])) }
        return true
    }

    /// Appends a literal's UTF-8 bytes.
    static func appendBytes(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }
}
