import BirthdayBuzz

/// Why a write-back was refused before anything was sent: the card's text
/// cannot be changed in its BDAY line alone with a result that reads back as
/// asked. The caller keeps the local decision and says so.
public struct BirthdayLineError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The card's text with its birthday changed and nothing else: every other
/// byte — photos, unknown properties, the folding and line ends of other
/// lines, a byte-order mark — stays as the server served it (write-back).
/// CRLF, LF and a lone CR are each a line end, in any mix.
///
/// `property` is the whole unfolded BDAY line without its line end, as
/// `birthdayProperty(year:month:day:forCard:)` makes it (`"BDAY:1990-05-17"`);
/// nil removes the birthday (`clear-birthday`). The first BDAY of the card
/// is replaced in place (its group prefix and parameters go with it) and any
/// further BDAY lines are removed; a card without one gets the line just
/// before its `END:VCARD`. The new line takes the line end of the line it
/// replaces, else of the card's first line. CR and LF inside `property` are
/// dropped, so it can never add a line.
///
/// Throws `BirthdayLineError`, and nothing is to be sent, when the change
/// cannot be made exactly: the text is not one vCard (no `BEGIN:VCARD` …
/// `END:VCARD`, or a second card after it), or the result would not read
/// back — with the same reader a sync uses — as the same contact with only
/// its birthday changed to what `property` says.
///
/// ```swift
/// let text = try replacingBirthday(in: served, with: "BDAY:1990-05-17")
/// ```
public func replacingBirthday(in cardText: String, with property: String?) throws -> String {
    let result = try replacingBirthdayLine(in: cardText, with: property)
    try checkReadsBack(original: cardText, written: result, property: property)
    return result
}

private func replacingBirthdayLine(in cardText: String, with property: String?) throws -> String {
    let bytes = Array(cardText.utf8)
    let lines = physicalLines(bytes)
    guard !lines.isEmpty else { throw BirthdayLineError(message: "the card's text is empty") }

    // Logical properties: a line and the folded lines (starting with space or tab) after it.
    var properties: [(start: Int, end: Int, firstLine: Int)] = []
    for (index, line) in lines.enumerated() {
        let folded = line.contentStart < line.contentEnd && (bytes[line.contentStart] == 0x20 || bytes[line.contentStart] == 0x09)
        if folded, !properties.isEmpty {
            properties[properties.count - 1].end = line.end
        } else {
            properties.append((line.contentStart, line.end, index))
        }
    }

    var depth = 0
    var birthdays: [Int] = []  // indexes into properties
    var beginOfCard: Int?
    var endOfCard: Int?
    for (index, logical) in properties.enumerated() {
        let name = propertyName(bytes, from: logical.start, to: logical.end)
        let value = leadingValue(bytes, from: logical.start, to: logical.end)
        if name == "BEGIN", value == "VCARD" {
            if depth == 0, beginOfCard != nil {
                throw BirthdayLineError(message: "the card's text holds more than one vCard")
            }
            if depth == 0 { beginOfCard = index }
            depth += 1
        } else if name == "END", value == "VCARD" {
            if depth == 1, endOfCard == nil { endOfCard = index }
            depth = max(0, depth - 1)
        } else if name == "BDAY", depth == 1, endOfCard == nil {
            birthdays.append(index)
        }
    }
    guard beginOfCard != nil, let endOfCard else {
        throw BirthdayLineError(message: "the card's text is not a whole vCard (BEGIN:VCARD … END:VCARD)")
    }

    let cleaned: [UInt8]? = property.map { Array($0.utf8.filter { $0 != 0x0D && $0 != 0x0A }) }
    func lineEnd(ofLine index: Int) -> [UInt8] {
        let line = lines[index]
        let end = Array(bytes[line.contentEnd..<line.end])
        if !end.isEmpty { return end }
        return lines.first.map { Array(bytes[$0.contentEnd..<$0.end]) }.flatMap { $0.isEmpty ? nil : $0 } ?? [0x0D, 0x0A]
    }

    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + (cleaned?.count ?? 0) + 2)
    var cursor = 0
    if let first = birthdays.first {
        for index in birthdays {
            let logical = properties[index]
            out += bytes[cursor..<logical.start]
            if index == first, let cleaned {
                let lastLine = index + 1 < properties.count ? properties[index + 1].firstLine - 1 : lines.count - 1
                out += cleaned
                out += lineEnd(ofLine: lastLine)
            }
            cursor = logical.end
        }
    } else if let cleaned {
        let insertAt = properties[endOfCard].start
        let eol = lineEnd(ofLine: properties[endOfCard].firstLine)
        out += bytes[cursor..<insertAt]
        out += cleaned
        out += eol
        cursor = insertAt
    } else {
        return cardText
    }
    out += bytes[cursor...]
    return String(decoding: out, as: UTF8.self)
}

/// The written text, read as a sync reads it, must be the same single contact
/// as the original with only its birthday changed, to the one `property` gives.
private func checkReadsBack(original: String, written: String, property: String?) throws {
    func single(_ text: String) -> ContactCard? {
        var found: [ContactCard] = []
        var skipped = false
        VCardReader.parse(text) { entry in
            switch entry {
            case .card(let card, _): found.append(card)
            case .skipped: skipped = true
            }
        }
        return found.count == 1 && !skipped ? found[0] : nil
    }
    guard let before = single(original) else {
        throw BirthdayLineError(message: "the card's text does not read as one vCard")
    }
    let asked = property.flatMap { single("BEGIN:VCARD\r\n" + String(decoding: $0.utf8.filter { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self) + "\r\nEND:VCARD\r\n") }
    var expected = before
    expected.birthday = asked?.birthday
    expected.birthdayText = asked?.birthdayText
    guard let after = single(written), after == expected else {
        throw BirthdayLineError(message: "the card would not read back with only its birthday changed")
    }
}

/// A BDAY line for `replacingBirthday(in:with:)` in the form the card's vCard
/// version expects: vCard 4 writes `BDAY:--0517` without a year; vCard 3
/// (and 2.1) has no year-less form, so it writes Apple's
/// `BDAY;X-APPLE-OMIT-YEAR=1604:1604-05-17`, which Apple, Google and our own
/// reader take as "no year".
public func birthdayProperty(year: Int?, month: Int, day: Int, forCard cardText: String) -> String {
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    func four(_ value: Int) -> String { String(repeating: "0", count: max(0, 4 - String(value).count)) + String(value) }
    let version4 = cardText.utf8.count < 4096
        ? cardText.contains("VERSION:4") : cardText.prefix(4096).contains("VERSION:4")
    if let year { return "BDAY:" + four(year) + "-" + two(month) + "-" + two(day) }
    return version4 ? "BDAY:--" + two(month) + two(day) : "BDAY;X-APPLE-OMIT-YEAR=1604:1604-" + two(month) + "-" + two(day)
}

/// One physical line: content `contentStart..<contentEnd`, then its line end
/// (CRLF, LF or a lone CR) up to `end`.
private struct PhysicalLine {
    var contentStart: Int
    var contentEnd: Int
    var end: Int
}

private func physicalLines(_ bytes: [UInt8]) -> [PhysicalLine] {
    var lines: [PhysicalLine] = []
    var start = 0
    var index = 0
    let count = bytes.count
    while index < count {
        let byte = bytes[index]
        if byte == 0x0A {
            lines.append(PhysicalLine(contentStart: start, contentEnd: index, end: index + 1))
            index += 1
            start = index
        } else if byte == 0x0D {
            let end = index + 1 < count && bytes[index + 1] == 0x0A ? index + 2 : index + 1
            lines.append(PhysicalLine(contentStart: start, contentEnd: index, end: end))
            index = end
            start = index
        } else {
            index += 1
        }
    }
    if start < count { lines.append(PhysicalLine(contentStart: start, contentEnd: count, end: count)) }
    return lines
}

/// The logical line's unfolded bytes, at most `limit` of them (names and short values).
private func unfoldedPrefix(_ bytes: [UInt8], from start: Int, to end: Int, limit: Int = 80) -> [UInt8] {
    var out: [UInt8] = []
    var index = start
    while index < end, out.count < limit {
        let byte = bytes[index]
        if byte == 0x0D || byte == 0x0A {
            // A fold: the line end and the one space or tab after it are not content.
            index += 1
            if byte == 0x0D, index < end, bytes[index] == 0x0A { index += 1 }
            if index < end, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            continue
        }
        out.append(byte)
        index += 1
    }
    return out
}

/// Where a property's text starts: after a byte-order mark at the start of
/// its line (the card's first line, or a card joined to others with `cat`),
/// as the reader skips it.
private func afterByteOrderMark(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Int {
    end - start >= 3 && bytes[start] == 0xEF && bytes[start + 1] == 0xBB && bytes[start + 2] == 0xBF ? start + 3 : start
}

/// The property's name, upper-cased, without a group prefix (`item1.BDAY` → `BDAY`).
private func propertyName(_ bytes: [UInt8], from start: Int, to end: Int) -> String {
    let prefix = unfoldedPrefix(bytes, from: afterByteOrderMark(bytes, start, end), to: end)
    let name = prefix.prefix { $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: ";") }
    let bare = name.lastIndex(of: UInt8(ascii: ".")).map { name[($0 + 1)...] } ?? name[...]
    return String(decoding: bare, as: UTF8.self).uppercased().trimmingWhitespaceASCII()
}

/// The start of the value after the first colon, upper-cased (for BEGIN/END:VCARD).
private func leadingValue(_ bytes: [UInt8], from start: Int, to end: Int) -> String {
    let prefix = unfoldedPrefix(bytes, from: afterByteOrderMark(bytes, start, end), to: end, limit: 40)
    guard let colon = prefix.firstIndex(of: UInt8(ascii: ":")) else { return "" }
    return String(decoding: prefix[(colon + 1)...], as: UTF8.self).uppercased().trimmingWhitespaceASCII()
}

extension String {
    fileprivate func trimmingWhitespaceASCII() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
