/// Text that must stay on one line: error messages, warnings, log records.
///
/// DESIGN §4 promises that every error is one line. Messages quote what the
/// user gave (a config value, a file name, a server reply), and those can hold
/// line breaks (`to = "a@b.c\r\nBcc: x@y"`); a quoted value is shown with them
/// escaped, as TOML would write it, instead of breaking the line. Other control
/// characters (ESC, which would let a value drive the terminal) are escaped too.
public enum OneLine {
    /// `text` with CR as `\r`, LF as `\n`, TAB kept, and every other C0 or C1
    /// control character, DEL, and U+2028/U+2029 as `\u{…}`. Text without any
    /// of them is returned as it is.
    public static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out.unicodeScalars.append(scalar)
            case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
