import Foundation

/// Collects the properties of one card and turns them into a `ContactCard`.
struct CardBuilder {
    let number: Int
    var size = 0
    /// Set when the card must be skipped (too large, a line too long).
    var problem: String?
    var uid: String?
    private var fn: String?
    private var n: [String]?
    private var bday: RawProperty?
    private var altBday: RawProperty?
    private var anniversary: RawProperty?
    private var deathDate: RawProperty?
    private var timeZone: RawProperty?
    private var phones: [Phone] = []
    private var emails: [Email] = []
    private var categories: [String] = []
    private var language: (value: String, pref: Int)?
    /// `KIND:group` (or Apple's `X-ADDRESSBOOKSERVER-KIND:group`): not a person.
    var isGroup = false
    /// Apple's `itemN.X-ABDATE` values, with their groups.
    private var appleDates: [(group: [UInt8], property: RawProperty)] = []
    /// Groups whose `X-ABLabel` is `_$!<Anniversary>!$_`.
    private var anniversaryGroups: [[UInt8]] = []
    /// The other `itemN.X-ABLabel`s, by group.
    private var appleLabels: [(group: [UInt8], property: RawProperty)] = []

    init(number: Int) {
        self.number = number
    }

    mutating func add(_ name: PropertyName, _ property: RawProperty) {
        switch name {
        case .uid:
            let value = VCardText.decode(property).trimmingWhitespace()
            if !value.isEmpty, uid == nil { uid = OneLine.collapsed(value) }
        case .fn:
            if fn == nil { fn = OneLine.collapsed(VCardText.decode(property)) }
        case .n:
            if n == nil {
                var parts = VCardText.components(property, separator: 0x3B)
                for index in parts.indices { parts[index] = OneLine.collapsed(parts[index]) }
                n = parts
            }
        case .bday:
            if bday == nil { bday = property }
        case .altBday:
            if altBday == nil { altBday = property }
        case .anniversary:
            if anniversary == nil { anniversary = property }
        case .deathDate:
            if deathDate == nil { deathDate = property }
        case .tz:
            if timeZone == nil { timeZone = property }
        case .tel:
            var number = OneLine.collapsed(VCardText.decode(property))
            if VCardText.isLonger(number, andStartsWith: "TEL:") {
                number = String(number.dropFirst(4))
            }
            guard !number.isEmpty else { return }
            let flags = property.typeFlags
            let kind: Phone.Kind = flags.cell ? .cell : flags.home ? .home : flags.work ? .work : .other
            phones.append(Phone(number: number, kind: kind, preferred: flags.preferred))
        case .email:
            var address = OneLine.collapsed(VCardText.decode(property))
            if VCardText.isLonger(address, andStartsWith: "MAILTO:") {
                address = String(address.dropFirst(7))
            }
            guard !address.isEmpty else { return }
            emails.append(Email(address: address, preferred: property.isPreferred))
        case .categories:
            for category in VCardText.components(property, separator: 0x2C) {
                let clean = OneLine.collapsed(category)
                if !clean.isEmpty, !categories.contains(clean) { categories.append(clean) }
            }
        case .lang:
            let value = OneLine.collapsed(VCardText.decode(property))
            guard !value.isEmpty else { return }
            let pref = property.parameter("PREF").flatMap { Int($0) } ?? (property.isPreferred ? 1 : 101)
            if language == nil || pref < language!.pref { language = (value, pref) }
        default:
            break
        }
    }

    mutating func addAppleDate(_ property: RawProperty, group: [UInt8]) {
        if !group.isEmpty { appleDates.append((group, property)) }
    }

    mutating func addAnniversaryLabel(group: [UInt8]) {
        if !group.isEmpty { anniversaryGroups.append(group) }
    }

    mutating func addAppleLabel(_ property: RawProperty, group: [UInt8]) {
        appleLabels.append((group, property))
    }

    /// An Apple label as people read it: `_$!<Other>!$_` is "Other"; blank is "Other".
    static func appleLabel(_ raw: String) -> String {
        var text = OneLine.collapsed(raw)
        if text.hasPrefix("_$!<"), text.hasSuffix(">!$_"), text.count > 8 {
            text = String(text.dropFirst(4).dropLast(4))
        }
        return text.isEmpty ? "Other" : text
    }

    /// The finished card, or the reason it is skipped.
    func build(today: LocalDate? = nil) -> ImportEntry {
        if let problem {
            return .skipped(CardProblem(cardNumber: number, uid: uid, message: problem))
        }
        var problems: [CardProblem] = []
        let formatted = fn ?? ""
        // Built only when there is no FN to show.
        var name = !formatted.isEmpty ? formatted : n.map { parts -> String in
            // N: family; given; additional; prefixes; suffixes → "prefix given additional family suffix"
            let order = [3, 1, 2, 0, 4]
            return order.compactMap { parts.indices.contains($0) ? parts[$0] : nil }
                .filter { !$0.isEmpty }.joined(separator: " ")
        } ?? ""
        let given = n.flatMap { $0.count > 1 ? $0[1] : nil }.flatMap { $0.isEmpty ? nil : $0 }

        let id: String
        if let uid {
            id = uid
        } else {
            id = ContactIdentity.derivedID(name: name, firstEmail: emails.first?.address, firstPhone: phones.first?.number)
        }
        if name.isEmpty { name = ContactIdentity.unknownName(id: id) }

        var birthday: Birthday?
        var birthdayText: String?
        if let bday {
            switch CardBuilder.readDate(bday, property: "BDAY") {
            case .empty: break
            case .date(let date):
                if let problem = date.futureProblem(today: today, property: "BDAY") {
                    problems.append(CardProblem(cardNumber: number, uid: uid, message: problem))
                } else {
                    birthday = date
                }
            case .text(let text): birthdayText = text
            case .invalid(let message): problems.append(CardProblem(cardNumber: number, uid: uid, message: message))
            }
        }
        if birthday == nil, let altBday, altBday.parameter("CALSCALE") != nil,
           case .date(let date) = CardBuilder.readDate(altBday, property: "X-ALTBDAY") {
            birthday = date
        }
        var anniversaryDate: Birthday?
        if let anniversary, case .date(let date) = CardBuilder.readDate(anniversary, property: "ANNIVERSARY") {
            anniversaryDate = date
        }
        // Apple: the X-ABDATE whose group's label is the anniversary one, in either
        // order, is the anniversary; the others are labelled dates.
        var labelledDates: [LabelledDate] = []
        for (group, property) in appleDates {
            guard case .date(let date) = CardBuilder.readDate(property, property: "X-ABDATE") else { continue }
            if anniversaryGroups.contains(group) {
                if anniversaryDate == nil { anniversaryDate = date }
                continue
            }
            let raw = appleLabels.first { $0.group == group }.map { VCardText.decode($0.property) } ?? ""
            let label = LabelledDate.uniqueLabel(Self.appleLabel(raw), among: labelledDates.map(\.label))
            labelledDates.append(LabelledDate(label: label, date: date))
        }
        var card = ContactCard(
            id: id, hasUID: uid != nil, name: name,
            firstName: given,
            birthday: birthday, birthdayText: birthdayText, anniversary: anniversaryDate,
            phones: phones, emails: emails, categories: categories, language: language?.value,
            isGroup: isGroup)
        card.labelledDates = labelledDates
        // RFC 6474 DEATHDATE (or X-DEATHDATE) is a date, a date-time or text. Any
        // value makes the contact deceased: one that is not a date (text, an
        // unreadable date) is kept as text rather than dropped, since a reminder
        // for someone who has died is worse than none.
        if let deathDate {
            switch CardBuilder.readDate(deathDate, property: "DEATHDATE") {
            case .empty: break
            case .date(let date): card.deathDate = date
            case .text(let text): card.deathText = text
            case .invalid:
                let text = OneLine.collapsed(VCardText.decode(deathDate))
                if !text.isEmpty { card.deathText = text }
            }
        }
        // TZ: `-05:00`, `VALUE=utc-offset:-0500` (vCard 3), `Asia/Tokyo`,
        // `VALUE=text:…` (vCard 4). A URI, or a name no zone database knows, is
        // ignored (kept aside for a debug line, never a problem for the import).
        if let timeZone, timeZone.parameter("VALUE")?.lowercased() != "uri" {
            let text = OneLine.collapsed(VCardText.decode(timeZone))
            if let zone = ContactTimeZone(vCardValue: text) {
                card.timeZone = zone
            } else if !text.isEmpty {
                card.unreadTimeZone = text
            }
        }
        return .card(card, problems: problems)
    }

    private enum DateValue {
        case empty, date(Birthday), text(String), invalid(String)
    }

    private static func readDate(_ property: RawProperty, property name: String) -> DateValue {
        let value = VCardText.decode(property)
        if let kind = property.parameter("VALUE"), asciiCaseEquals(kind.utf8, "TEXT") {
            let text = OneLine.collapsed(value)
            return text.isEmpty ? .empty : .text(text)
        }
        var calendar = BirthdayCalendar.gregorian
        if let scale = property.parameter("CALSCALE") {
            guard let known = BirthdayCalendar(calscale: scale) else {
                return .invalid("\(name) calendar \"\(scale)\" is not supported (gregorian, hebrew, chinese, islamic-umalqura, persian)")
            }
            calendar = known
        }
        let omit = property.parameter("X-APPLE-OMIT-YEAR").flatMap { Int($0) }
        switch VCardDate.parse(value, property: name, omitYear: omit, calendar: calendar) {
        case .empty: return .empty
        case .date(let date): return .date(date)
        case .invalid(let message): return .invalid(OneLine.collapsed(message))
        }
    }
}

/// Decoding of vCard property values: QUOTED-PRINTABLE, CHARSET, escapes.
public enum VCardText {
    /// The value's bytes after transfer decoding, as text in its CHARSET
    /// (UTF-8 by default; invalid UTF-8 is read as Windows-1252).
    static func decodedString(_ property: RawProperty) -> String {
        var bytes = property.value
        if property.parameter("ENCODING")?.uppercased() == "QUOTED-PRINTABLE" {
            bytes = quotedPrintable(bytes)[...]
        }
        let charset = property.parameter("CHARSET")?.uppercased() ?? "UTF-8"
        switch charset {
        case "UTF-8", "UTF8", "US-ASCII", "ASCII":
            if let text = validUTF8(bytes) { return text }
            return String(data: Data(bytes), encoding: .windowsCP1252) ?? String(decoding: bytes, as: UTF8.self)
        case "ISO-8859-1", "LATIN1", "ISO8859-1":
            return String(data: Data(bytes), encoding: .isoLatin1) ?? String(decoding: bytes, as: UTF8.self)
        case "WINDOWS-1252", "CP1252":
            return String(data: Data(bytes), encoding: .windowsCP1252) ?? String(decoding: bytes, as: UTF8.self)
        case "ISO-8859-2", "LATIN2":
            return String(data: Data(bytes), encoding: .isoLatin2) ?? String(decoding: bytes, as: UTF8.self)
        case "UTF-16", "UTF-16LE", "UTF-16BE":
            return String(data: Data(bytes), encoding: .utf16) ?? String(decoding: bytes, as: UTF8.self)
        default:
            return validUTF8(bytes)
                ?? String(data: Data(bytes), encoding: .windowsCP1252) ?? String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The bytes as text if they are valid UTF-8, else nil: what
    /// `String(validating:as:)` answers, without its generic (unspecialized,
    /// several times slower) code path. A repaired decoding always differs
    /// from its input, so equal bytes mean the input was valid.
    static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { input -> String? in
            var text = String(decoding: input, as: UTF8.self)
            guard text.utf8.count == input.count else { return nil }
            let same = text.withUTF8 { output in
                output.count == 0 || memcmp(output.baseAddress!, input.baseAddress!, output.count) == 0
            }
            return same ? text : nil
        }
    }

    /// Whether `text` is longer than `prefix` (ASCII, upper case) and starts
    /// with it in any case.
    static func isLonger(_ text: String, andStartsWith prefix: StaticString) -> Bool {
        text.utf8.count > prefix.utf8CodeUnitCount && asciiCaseHasPrefix(text.utf8, prefix)
    }

    /// Decoded and unescaped text value.
    static func decode(_ property: RawProperty) -> String {
        unescape(decodedString(property))
    }

    /// Splits a structured value on an unescaped separator (`;` for N, `,` for
    /// CATEGORIES), then unescapes each part.
    static func components(_ property: RawProperty, separator: UInt8) -> [String] {
        var text = decodedString(property)
        // Separators and backslashes are ASCII, so splitting the UTF-8 bytes is
        // exact, and every part is valid UTF-8 again.
        return text.withUTF8 { utf8 in
            var parts: [String] = []
            var start = 0
            var escaped = false
            for index in 0..<utf8.count {
                let byte = utf8[index]
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == separator {
                    parts.append(unescape(String(decoding: UnsafeBufferPointer(rebasing: utf8[start..<index]), as: UTF8.self)))
                    start = index + 1
                }
            }
            parts.append(unescape(String(decoding: UnsafeBufferPointer(rebasing: utf8[start...]), as: UTF8.self)))
            return parts
        }
    }

    /// `\n` `\N` → newline; `\,` `\;` `\:` `\\` → the character.
    static func unescape(_ text: String) -> String {
        let hasBackslash = text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count > 0 && memchr(bytes.baseAddress!, 0x5C, bytes.count) != nil
        } ?? text.utf8.contains(0x5C)
        guard hasBackslash else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var escaped = false
        for byte in text.utf8 {
            if escaped {
                out.append(byte == 0x6E || byte == 0x4E ? 0x0A : byte)
                escaped = false
            } else if byte == 0x5C {
                escaped = true
            } else {
                out.append(byte)
            }
        }
        if escaped { out.append(0x5C) }
        return String(decoding: out, as: UTF8.self)
    }

    /// QUOTED-PRINTABLE decoding (soft breaks were joined by the reader).
    static func quotedPrintable(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: return b - 0x30
            case 0x41...0x46: return b - 0x37
            case 0x61...0x66: return b - 0x57
            default: return nil
            }
        }
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x3D, index + 2 < bytes.endIndex, let hi = hex(bytes[index + 1]), let lo = hex(bytes[index + 2]) {
                out.append(hi << 4 | lo)
                index += 3
            } else if byte == 0x3D, index + 1 == bytes.endIndex {
                index += 1  // a trailing soft break
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }
}
