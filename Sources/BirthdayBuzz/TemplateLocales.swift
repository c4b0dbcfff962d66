import Foundation
// Linked explicitly: with --static-swift-stdlib, DateFormatter finds no locale data without it (docs/design/decisions.md).
#if canImport(FoundationInternationalization)
import FoundationInternationalization
#endif
import Mustache
import Synchronization

// The locale side of MessageTemplates: dates in the template's language,
// BCP 47 tags and the RFC 4647 lookup chain.

// MARK: - Dates

extension MessageTemplates {
    /// The date's locale: the requested one when the template is in its language
    /// (`de-AT` gets "Jänner" from the `de` template), else the template's.
    static func dateLocale(requested: String, used: String) -> String {
        guard let tag = canonicalTag(requested), language(of: tag) == language(of: used) else { return used }
        return tag
    }

    /// Weekday, day and month, no year, e.g. "Monday, March 15" / "Montag, 15. März".
    static func format(_ date: LocalDate, locale identifier: String) -> String {
        // ICU builds a date formatter in milliseconds; a batch of reminders shares
        // a handful of (date, locale) pairs, so each is formatted once per process.
        let key = identifier + "|" + date.description
        if let cached = formattedDates.withLock({ $0[key] }) { return cached }
        let text = formatUncached(date, locale: identifier)
        formattedDates.withLock { cache in
            if cache.count > 4_096 { cache.removeAll() }
            cache[key] = text
        }
        return text
    }

    private static let formattedDates = Mutex<[String: String]>([:])

    private static func formatUncached(_ date: LocalDate, locale identifier: String) -> String {
        guard let instant = date.utcMidnight else { return date.description }
        let locale = Locale(identifier: identifier)
        let utc = TimeZone(secondsFromGMT: 0) ?? TimeZone.current
        // Always Gregorian: the day and month are those of the LocalDate, whatever
        // calendar the locale prefers.
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = locale
        calendar.timeZone = utc
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.calendar = calendar
        formatter.timeZone = utc
        formatter.dateFormat = DateFormatter.dateFormat(fromTemplate: "EEEEdMMMM", options: 0, locale: locale)
            ?? "EEEE d MMMM"
        return formatter.string(from: instant)
    }
}

// MARK: - Locale tags

extension MessageTemplates {
    /// `de_at.UTF-8` → `de-AT`, `zh_hant_tw` → `zh-Hant-TW`; nil when not a language tag
    /// (`C`, `POSIX`, empty).
    static func canonicalTag(_ raw: String) -> String? {
        var text = Substring(raw.trimmingWhitespace())
        if let dot = text.firstIndex(of: ".") { text = text[..<dot] }   // POSIX codeset
        if let at = text.firstIndex(of: "@") { text = text[..<at] }     // POSIX modifier
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "_" }
        guard let language = parts.first, (2...8).contains(language.count),
              language.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        var result = [language.lowercased()]
        for part in parts.dropFirst() {
            guard (1...8).contains(part.count), part.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                return nil
            }
            if part.count == 4, part.allSatisfy(\.isLetter) {
                result.append(part.prefix(1).uppercased() + part.dropFirst().lowercased())   // script
            } else if (part.count == 2 && part.allSatisfy(\.isLetter)) || (part.count == 3 && part.allSatisfy(\.isNumber)) {
                result.append(part.uppercased())                                             // region
            } else {
                result.append(part.lowercased())
            }
        }
        return result.joined(separator: "-")
    }

    static func language(of tag: String) -> String {
        String(tag.prefix { $0 != "-" })
    }

    /// Each preferred tag then its shorter forms (RFC 4647 lookup), without repeats, then `en`.
    static func lookupChain(_ preferred: [String]) -> [String] {
        var chain: [String] = []
        for raw in preferred {
            guard let tag = canonicalTag(raw) else { continue }
            var parts = tag.split(separator: "-").map(String.init)
            while !parts.isEmpty {
                let candidate = parts.joined(separator: "-")
                if !chain.contains(candidate) { chain.append(candidate) }
                parts.removeLast()
                // A trailing singleton (`x` of `de-x-foo`) is never a tag of its own.
                if parts.count > 1, let last = parts.last, last.count == 1 { parts.removeLast() }
            }
        }
        if !chain.contains(lastResort) { chain.append(lastResort) }
        return chain
    }
}
