/// Text that must stay on one line: error messages, warnings, log records.
///
/// docs/design/command-line.md promises that every error is one line. Messages quote what the
/// user gave (a config value, a file name, a server reply), and those can hold
/// line breaks (`to = "a@b.c\r\nBcc: x@y"`); a quoted value is shown with them
/// escaped, as TOML would write it, instead of breaking the line. Other control
/// characters (ESC, which would let a value drive the terminal) are escaped too.
public enum OneLine {
    /// BiDi embedding, override and isolate controls (U+202A–202E,
    /// U+2066–2069): in a name they can flip the text around it ("RLO" makes
    /// `buzz list` and a reminder show another name), so names drop them.
    @inline(__always)
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// One line of text: control characters (CR, LF, TAB, …) become spaces,
    /// runs of spaces collapse, ends are trimmed, BiDi override and isolate
    /// controls are removed. Names and addresses are shown and put in mail
    /// headers, so nothing may break a line or reorder what is shown around it.
    /// (Where `escaped` shows a line break, this removes it.)
    public static func collapsed(_ text: String) -> String {
        // Fast path: nothing to change (no control bytes, C1 controls or separators,
        // no leading, trailing or doubled spaces).
        func scan<S: Sequence<UInt8>>(_ bytes: S) -> (needsWork: Bool, previous: UInt8) {
            var previous: UInt8 = 0x20
            for byte in bytes {
                if byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2 || (byte == 0x20 && previous == 0x20) {
                    return (true, previous)
                }
                previous = byte
            }
            return (false, previous)
        }
        let (needsWork, previous) = text.utf8.withContiguousStorageIfAvailable(scan) ?? scan(text.utf8)
        if !needsWork, previous != 0x20 { return text }
        var out = ""
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            let isSpace = scalar.value < 0x20 || scalar.value == 0x7F || scalar == " "
                || (scalar.value >= 0x80 && scalar.value < 0xA0) || scalar == "\u{2028}" || scalar == "\u{2029}"
            if isSpace {
                if !lastWasSpace { out.unicodeScalars.append(" ") }
                lastWasSpace = true
            } else if isBidiControl(scalar) {
                continue
            } else {
                out.unicodeScalars.append(scalar)
                lastWasSpace = false
            }
        }
        if out.last == " " { out.removeLast() }
        return out
    }


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
