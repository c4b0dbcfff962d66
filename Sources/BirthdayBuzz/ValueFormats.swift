/// Parsing of the small value formats the config and the command line use.
public enum ValueFormats {
    /// Parses a duration such as `12h`, `90m`, `1h30m`, `45s`, `2d`, `0s` into seconds.
    public static func duration(_ text: String) -> Int? {
        var total = 0
        var number = 0
        var sawDigit = false
        var sawUnit = false
        for scalar in text.unicodeScalars {
            if let digit = Int(String(scalar)), scalar.isASCII {
                number = number * 10 + digit
                if number > 10_000_000 { return nil }
                sawDigit = true
                continue
            }
            guard sawDigit else { return nil }
            switch scalar {
            case "d": total += number * 86_400
            case "h": total += number * 3_600
            case "m": total += number * 60
            case "s": total += number
            default: return nil
            }
            number = 0
            sawDigit = false
            sawUnit = true
        }
        return sawUnit && !sawDigit ? total : nil
    }

    /// Renders seconds back as the shortest duration text (`12h`, `1h30m`, `0s`).
    public static func durationText(_ seconds: Int) -> String {
        if seconds == 0 { return "0s" }
        var rest = seconds
        var out = ""
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] where rest >= size {
            out += "\(rest / size)\(unit)"
            rest %= size
        }
        return out
    }

    /// Parses a wall-clock time `HH:MM` (24-hour) into minutes after midnight.
    public static func timeOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]),
              (0...23).contains(h), (0...59).contains(m) else { return nil }
        return h * 60 + m
    }

    /// Normalizes a POSIX locale (`de_AT.UTF-8@euro`) or BCP 47 tag to BCP 47 (`de-AT`).
    /// `C` and `POSIX` mean English. Returns nil for an empty or unusable value.
    public static func bcp47(fromPOSIX raw: String) -> String? {
        var text = Substring(raw)
        if let dot = text.firstIndex(where: { $0 == "." || $0 == "@" }) { text = text[..<dot] }
        if text.isEmpty { return nil }
        if text == "C" || text == "POSIX" { return "en" }
        let parts = text.split(whereSeparator: { $0 == "_" || $0 == "-" })
        guard let language = parts.first, (2...3).contains(language.count),
              language.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        var tag = language.lowercased()
        if parts.count > 1 {
            let region = parts[1]
            guard region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return tag }
            tag += "-" + (region.count == 2 ? region.uppercased() : String(region))
        }
        return tag
    }

    /// `general.locale`'s default: `$LC_ALL`, then `$LC_MESSAGES`, then `$LANG`, else `en`.
    public static func localeFromEnvironment(_ environment: [String: String]) -> String {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key], !value.isEmpty {
                return bcp47(fromPOSIX: value) ?? "en"
            }
        }
        return "en"
    }
}
