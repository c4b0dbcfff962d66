/// Reading vCard date values (BDAY, ANNIVERSARY and their vendor forms).
public enum VCardDate {
    /// The result of reading a date value.
    public enum Reading: Equatable, Sendable {
        /// No value at all: no birthday (an empty BDAY is not "today").
        case empty
        case date(Birthday)
        /// Something that is not a usable date; the message says what.
        case invalid(String)
    }

    static var placeholderYears: Set<Int> { Birthday.placeholderYears }

    /// Reads `1990-03-15`, `19900315`, `--0315`, `--03-15`, a date-time
    /// (`1990-03-15T00:00:00Z`, `19531015T231000Z`: the literal date, no zone
    /// conversion) and Apple's `X-APPLE-OMIT-YEAR` (`omitYear`) or a placeholder year
    /// (1604, 0000, khard's 1900: `Birthday.placeholderYears`).
    ///
    /// - Parameter property: the property name, for messages (`BDAY`).
    public static func parse(_ raw: String, property: String = "BDAY", omitYear: Int? = nil,
                            calendar: BirthdayCalendar = .gregorian) -> Reading {
        var text = raw.trimmingWhitespace()
        if text.isEmpty { return .empty }
        if case let (year, month, day)? = text.withUTF8(commonForm) {
            return finish(year: year, month: month, day: day, text: text, property: property, omitYear: omitYear,
                          calendar: calendar)
        }
        var bytes = Array(text.utf8)
        if let t = bytes.firstIndex(where: { $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: "t") }), t >= 4 {
            bytes.removeSubrange(t...)
        }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func number(_ slice: ArraySlice<UInt8>) -> Int? {
            guard !slice.isEmpty, slice.count <= 4, slice.allSatisfy(isDigit) else { return nil }
            return slice.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        var year: Int?
        var month: Int?
        var day: Int?
        if bytes.starts(with: [0x2D, 0x2D]) {  // --MMDD or --MM-DD
            let rest = bytes[2...]
            let parts = rest.split(separator: 0x2D, omittingEmptySubsequences: false)
            if parts.count == 1, rest.count == 4 {
                month = number(rest.prefix(2)); day = number(rest.suffix(2))
            } else if parts.count == 2, parts[0].count == 2, parts[1].count == 2 {
                month = number(parts[0]); day = number(parts[1])
            } else if parts.count == 1, rest.count == 2 || (parts.count == 1 && rest.isEmpty) {
                return .invalid("\(property) \"\(text)\" has no day")
            }
        } else if bytes.count == 8, bytes.allSatisfy(isDigit) {  // YYYYMMDD
            year = number(bytes[0..<4]); month = number(bytes[4..<6]); day = number(bytes[6..<8])
        } else {
            let parts = bytes.split(separator: 0x2D, omittingEmptySubsequences: false)
            if parts.count == 3, parts[0].count == 4, (1...2).contains(parts[1].count), (1...2).contains(parts[2].count) {
                year = number(parts[0]); month = number(parts[1]); day = number(parts[2])
            } else if parts.count == 2, parts[0].count == 4, parts[1].count == 2, number(parts[0]) != nil {
                return .invalid("\(property) \"\(text)\" has no day")
            }
        }
        return finish(year: year, month: month, day: day, text: text, property: property, omitYear: omitYear,
                      calendar: calendar)
    }

    /// The four forms nearly every card uses, read in place: `YYYY-MM-DD` and
    /// `YYYYMMDD` (each maybe followed by a `T` time), `--MMDD` and `--MM-DD`.
    /// Anything else is nil and goes through the general reading above, which
    /// gives these forms the same year, month and day.
    private static func commonForm(_ b: UnsafeBufferPointer<UInt8>) -> (Int?, Int?, Int?)? {
        @inline(__always) func digit(_ i: Int) -> Int? {
            b[i] >= 0x30 && b[i] <= 0x39 ? Int(b[i] - 0x30) : nil
        }
        @inline(__always) func two(_ i: Int) -> Int? {
            guard let hi = digit(i), let lo = digit(i + 1) else { return nil }
            return hi * 10 + lo
        }
        @inline(__always) func endsAt(_ i: Int) -> Bool {
            b.count == i || b[i] == 0x54 || b[i] == 0x74  // the end, or a time after `T`/`t`
        }
        let n = b.count
        if n >= 10, b[4] == 0x2D, b[7] == 0x2D, endsAt(10),
           let y1 = two(0), let y2 = two(2), let m = two(5), let d = two(8) {
            return (y1 * 100 + y2, m, d)
        }
        if n >= 8, endsAt(8), let y1 = two(0), let y2 = two(2), let m = two(4), let d = two(6) {
            return (y1 * 100 + y2, m, d)
        }
        if n == 6, b[0] == 0x2D, b[1] == 0x2D, let m = two(2), let d = two(4) { return (nil, m, d) }
        if n == 7, b[0] == 0x2D, b[1] == 0x2D, b[4] == 0x2D, let m = two(2), let d = two(5) { return (nil, m, d) }
        return nil
    }

    private static func finish(year: Int?, month: Int?, day: Int?, text: String, property: String, omitYear: Int?,
                               calendar: BirthdayCalendar) -> Reading {
        guard var y = year ?? (month != nil ? -1 : nil), let m = month, let d = day else {
            return .invalid("\(property) \"\(text)\" is not a date")
        }
        if y == -1 || placeholderYears.contains(y) || y == omitYear { y = -1 }
        guard let birthday = Birthday(month: m, day: d, year: y == -1 ? nil : y, calendar: calendar) else {
            return .invalid("\(property) \"\(text)\" is not a date")
        }
        return .date(birthday)
    }
}

extension StringProtocol {
    /// The text without leading and trailing white space (spaces, tabs, newlines).
    func trimmingWhitespace() -> String {
        let utf8 = self.utf8
        if let first = utf8.first, first > 0x20, first < 0x80 {
            // The last byte: read in place when the text is contiguous (a native String).
            let last = utf8.withContiguousStorageIfAvailable { $0.last } ?? {
                var last = first
                for byte in utf8 { last = byte }
                return last
            }()
            if let last, last > 0x20, last < 0x80 { return String(self) }
        }
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
