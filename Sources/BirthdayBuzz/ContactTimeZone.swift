import Foundation

/// The time zone a contact lives in, from the card's `TZ`: an IANA name
/// (`Asia/Tokyo`, vCard 4) or a fixed UTC offset (`-05:00`, vCard 3).
///
/// Reminders use it to say when the contact's day starts in the user's time
/// (`their_time`), and a scheduled wish is sent at a time of the contact's day.
public struct ContactTimeZone: Hashable, Sendable, CustomStringConvertible {
    /// What the store keeps: the IANA name, or `±HH:MM` for an offset.
    public let stored: String
    public let timeZone: TimeZone

    /// From a stored form (`Asia/Tokyo`, `-05:00`); nil for anything else.
    public init?(stored: String) {
        if let offset = Self.offsetSeconds(stored) {
            guard let zone = TimeZone(secondsFromGMT: offset) else { return nil }
            self.stored = Self.offsetText(offset)
            timeZone = zone
            return
        }
        // Only names the zone database knows (TimeZone also accepts abbreviations
        // such as "EST", which are not places and whose meaning varies).
        guard stored.contains("/") || stored == "UTC", let zone = TimeZone(identifier: stored) else { return nil }
        self.stored = stored
        timeZone = zone
    }

    /// From a card's `TZ` value as decoded text. vCard 3 allows a structured text
    /// value (`-05:00; EST; Raleigh/North America`): the first part that is an
    /// offset or a known zone name wins. nil when none is (a URI, an unknown name).
    public init?(vCardValue text: String) {
        for part in text.split(separator: ";") {
            let candidate = part.trimmingCharacters(in: .whitespaces)
            if !candidate.isEmpty, let zone = ContactTimeZone(stored: candidate) {
                self = zone
                return
            }
        }
        return nil
    }

    /// `Asia/Tokyo`, or `UTC-05:00` for an offset.
    public var description: String { stored.first == "+" || stored.first == "-" ? "UTC" + stored : stored }

    /// `-05:00`, `-0500`, `+09`, `Z` as seconds east of UTC; nil otherwise.
    static func offsetSeconds(_ text: String) -> Int? {
        if text == "Z" { return 0 }
        let bytes = Array(text.utf8)
        guard let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        var digits = Array(bytes.dropFirst())
        // ±HH, ±HHMM or ±HH:MM
        if digits.count == 5, digits[2] == UInt8(ascii: ":") { digits.remove(at: 2) }
        guard [2, 4].contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let values = digits.map { Int($0 - 0x30) }
        let hours = values[0] * 10 + values[1]
        let minutes = values.count == 4 ? values[2] * 10 + values[3] : 0
        guard hours <= 14, minutes < 60 else { return nil }
        let seconds = hours * 3_600 + minutes * 60
        return sign == UInt8(ascii: "-") ? -seconds : seconds
    }

    static func offsetText(_ seconds: Int) -> String {
        let absolute = abs(seconds)
        let hours = absolute / 3_600, minutes = absolute / 60 % 60
        return (seconds < 0 ? "-" : "+") + (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}

/// What a reminder says about the contact's own day when their zone differs from
/// the user's: the template variables `their_time` and `their_day_starts`.
public struct TheirDay: Hashable, Sendable {
    /// The contact's wall-clock time at the reminder's fire time, `HH:MM` (`their_time`).
    public var theirTime: String
    /// When the contact's occurrence day begins, in the user's wall-clock time, `HH:MM`.
    public var dayStarts: String
    /// Their day begins on the day before the occurrence date in the user's time
    /// (they live ahead of the user: their birthday began "yesterday at 16:00").
    public var dayStartsTheDayBefore: Bool

    /// nil when the zones agree at that time: the same UTC offset is the same
    /// day (Paris and Berlin), whatever the names.
    public init?(zone: ContactTimeZone?, occurrence: LocalDate, fireAt: Int64, ours: WallClock) {
        guard let zone else { return nil }
        let theirs = WallClock(timeZone: zone.timeZone)
        let start = theirs.instant(of: occurrence, secondsAfterMidnight: 0)
        guard theirs.offset(at: fireAt) != ours.offset(at: fireAt) || theirs.offset(at: start) != ours.offset(at: start)
        else { return nil }
        theirTime = Self.clockText(fireAt, theirs)
        dayStarts = Self.clockText(start, ours)
        dayStartsTheDayBefore = ours.localDate(at: start) < occurrence
    }

    /// `HH:MM` of an instant on a clock.
    public static func clockText(_ instant: Int64, _ clock: WallClock) -> String {
        let local = instant + Int64(clock.offset(at: instant))
        let second = Int(((local % 86_400) + 86_400) % 86_400)
        let hours = second / 3_600, minutes = second / 60 % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }
}
