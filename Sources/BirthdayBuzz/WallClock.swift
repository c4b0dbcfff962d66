import Foundation

/// Conversions between instants and local wall-clock time in an IANA zone.
///
/// Instants are whole seconds since 1970-01-01T00:00Z.
public struct WallClock: Sendable {
    public let timeZone: TimeZone

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// UTC offset in seconds in force at an instant.
    @inline(__always)
    public func offset(at instant: Int64) -> Int {
        timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    /// The local calendar date at an instant.
    public func localDate(at instant: Int64) -> LocalDate {
        let local = instant + Int64(offset(at: instant))
        return LocalDate(daysSinceEpoch: Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400))
    }

    /// The instant a local wall-clock time happens, by RFC 5545's reading:
    /// in a DST gap the offset in force before the gap applies (02:30 on a
    /// spring-forward night is 03:30), in an overlap the first instant wins.
    public func instant(of date: LocalDate, secondsAfterMidnight: Int) -> Int64 {
        let naive = Int64(date.daysSinceEpoch) * 86_400 + Int64(secondsAfterMidnight)
        // Offsets a day either side bracket any single transition near this time.
        let before = offset(at: naive - 86_400)
        let after = offset(at: naive + 86_400)
        if before == after {
            // Still check: a transition may have happened and reversed within the window.
            let candidate = naive - Int64(before)
            if offset(at: candidate) == before { return candidate }
        }
        let first = naive - Int64(before)
        let second = naive - Int64(after)
        let firstValid = offset(at: first) == before
        let secondValid = offset(at: second) == after
        switch (firstValid, secondValid) {
        case (true, true): return min(first, second)  // overlap: the earlier instant
        case (true, false): return first
        case (false, true): return second
        case (false, false): return first  // gap: offset from before the gap
        }
    }

    /// ISO 8601 with the local UTC offset: `2027-03-14T09:00:00+01:00`.
    public func iso8601(_ instant: Int64) -> String {
        let offset = self.offset(at: instant)
        let local = instant + Int64(offset)
        let days = Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
        let secondOfDay = Int(local - Int64(days) * 86_400)
        let date = LocalDate(daysSinceEpoch: days)
        let sign = offset < 0 ? "-" : "+"
        let absolute = abs(offset)
        return date.description + "T" + pad(secondOfDay / 3_600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":"
            + pad(secondOfDay % 60, 2) + sign + pad(absolute / 3_600, 2) + ":" + pad(absolute / 60 % 60, 2)
    }
}

/// The `--now` value: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` with optional `Z` or `±HH:MM`.
///
/// Without an offset it is local time in `general.timezone` (a bare date is that
/// day's 00:00), so resolving it needs the zone: see `instant(in:)`.
public struct PinnedNow: Sendable, Equatable {
    public var date: LocalDate
    public var secondsAfterMidnight: Int
    /// Seconds east of UTC when the text gave one.
    public var utcOffset: Int?

    /// Parses the text; nil when it is not one of the accepted forms.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 10, bytes[4] == 45, bytes[7] == 45,
              let y = number(0..<4), let m = number(5..<7), let d = number(8..<10),
              let date = LocalDate(year: y, month: m, day: d) else { return nil }
        self.date = date
        secondsAfterMidnight = 0
        utcOffset = nil
        var index = 10
        if index == bytes.count { return }
        guard bytes[index] == 84 || bytes[index] == 116 || bytes[index] == 32,  // T, t or space
              let h = number(index + 1..<index + 3), index + 3 < bytes.count, bytes[index + 3] == 58,
              let mi = number(index + 4..<index + 6), h < 24, mi < 60 else { return nil }
        var seconds = h * 3_600 + mi * 60
        index += 6
        if index < bytes.count, bytes[index] == 58 {
            guard let s = number(index + 1..<index + 3), s < 60 else { return nil }
            seconds += s
            index += 3
        }
        secondsAfterMidnight = seconds
        if index == bytes.count { return }
        if bytes[index] == 90 || bytes[index] == 122, index + 1 == bytes.count {  // Z
            utcOffset = 0
            return
        }
        guard bytes[index] == 43 || bytes[index] == 45, index + 6 == bytes.count,  // + or -
              let oh = number(index + 1..<index + 3), bytes[index + 3] == 58,
              let om = number(index + 4..<index + 6), oh < 24, om < 60 else { return nil }
        utcOffset = (bytes[index] == 45 ? -1 : 1) * (oh * 3_600 + om * 60)
    }

    /// The instant this names, reading a local time in `clock`'s zone.
    public func instant(in clock: WallClock) -> Int64 {
        if let utcOffset {
            return Int64(date.daysSinceEpoch) * 86_400 + Int64(secondsAfterMidnight) - Int64(utcOffset)
        }
        return clock.instant(of: date, secondsAfterMidnight: secondsAfterMidnight)
    }
}
