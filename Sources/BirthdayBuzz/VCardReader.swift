import Foundation

/// A streaming vCard 2.1 / 3.0 / 4.0 reader.
///
/// Feed it bytes in chunks of any size; it emits one `ImportEntry` per card as
/// soon as the card ends, so a 100k-card file is never held in memory. Values
/// of PHOTO, LOGO, SOUND and KEY are dropped while streaming. Handles folded
/// lines, CRLF, LF or CR line ends (mixed too), a UTF-8 BOM (also before a
/// card in the middle of a file), QUOTED-PRINTABLE soft breaks and CHARSET
/// (2.1), lowercase names, group prefixes (`item1.TEL`) and escaped values.
///
/// A truncated card (a BEGIN:VCARD before its END:VCARD, or the end of input)
/// is reported and does not swallow the next one.
public struct VCardReader {
    /// Longest logical line kept (dropped properties do not count).
    public var maxLineBytes: Int
    /// Largest card, counting only what is kept.
    public var maxCardBytes: Int
    /// With a date, a BDAY after it is reported and the card kept without a
    /// birthday (a typo like 2090 for 1990 would otherwise never fire).
    public var today: LocalDate?

    private var partial: [UInt8] = []
    private var atStart = true
    /// The previous chunk ended in a CR: an LF starting this one belongs to it.
    private var skipLineFeed = false
    private var logical = LogicalLine()
    private var card: CardBuilder?
    private var cardNumber = 0
    private var nestedDepth = 0
    private var lastPropertyWasEmptyAgent = false
    /// Set by `finish` when the input ended inside a card: it was cut off (a
    /// writer halfway), so what came after the cut is unknown.
    public private(set) var endedInsideCard = false

    public init(maxLineBytes: Int = 1 << 20, maxCardBytes: Int = 4 << 20) {
        self.maxLineBytes = maxLineBytes
        self.maxCardBytes = maxCardBytes
    }

    /// Reads a whole buffer (convenience for tests and small inputs).
    public static func parse(_ text: String, _ body: (ImportEntry) -> Void) {
        var reader = VCardReader()
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { reader.feed(UnsafeRawBufferPointer($0), body) }
        reader.finish(body)
    }

    /// Feeds the next chunk of input.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (ImportEntry) -> Void) {
        guard var base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var remaining = chunk.count
        if atStart {
            // Skip a UTF-8 BOM, possibly split across the first chunks.
            while remaining > 0, partial.count < 3, [0xEF, 0xBB, 0xBF][partial.count] == base[0] {
                partial.append(base[0]); base += 1; remaining -= 1
            }
            if partial.count == 3 || remaining > 0 {
                if partial.count != 3 { /* not a BOM: keep those bytes as data */ } else { partial.removeAll() }
                atStart = false
            } else { return }
        }
        if skipLineFeed, remaining > 0 {
            // The LF of a CRLF whose CR ended the previous chunk.
            if base[0] == 0x0A { base += 1; remaining -= 1 }
            skipLineFeed = false
        }
        // A line ends at CR, LF or CRLF (a CR-only or mixed file is read as
        // its author's editor showed it, and as an XML parser hands a card
        // over). The next LF and the next CR are each looked for once and
        // kept until passed, so a file of one kind is read in one pass.
        let count = remaining
        var position = 0
        var nextLF = -1
        var nextCR = -1
        while position < count {
            if nextLF < position {
                nextLF = memchr(base + position, 0x0A, count - position).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
            }
            if nextCR < position {
                nextCR = memchr(base + position, 0x0D, count - position).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
            }
            let end = min(nextLF, nextCR)
            let rest = UnsafeBufferPointer(start: base + position, count: count - position)
            guard end < count else {
                if partial.count < maxLineBytes + 2 { partial.append(contentsOf: rest) }
                return
            }
            var next = end + 1
            if end == nextCR {
                if next < count {
                    if base[next] == 0x0A { next += 1 }
                } else {
                    skipLineFeed = true
                }
            }
            let length = end - position
            if partial.isEmpty {
                physicalLine(UnsafeBufferPointer(rebasing: rest[..<length]), emit)
            } else {
                if partial.count < maxLineBytes + 2 { partial.append(contentsOf: rest[..<length]) }
                let line = partial
                partial.removeAll(keepingCapacity: true)
                line.withUnsafeBufferPointer { physicalLine($0, emit) }
            }
            position = next
        }
    }

    /// Ends the input: flushes the last line and reports a card left open.
    public mutating func finish(_ emit: (ImportEntry) -> Void) {
        skipLineFeed = false
        if !partial.isEmpty {
            let line = partial
            partial.removeAll()
            line.withUnsafeBufferPointer { physicalLine($0, emit) }
        }
        completeLogicalLine(emit)
        if let open = card {
            emit(.skipped(CardProblem(cardNumber: open.number, uid: open.uid,
                                      message: "truncated: the input ends before END:VCARD")))
            card = nil
            endedInsideCard = true
        }
    }

    // MARK: - Lines

    /// One line without its line end (CR, LF or CRLF).
    private mutating func physicalLine(_ raw: UnsafeBufferPointer<UInt8>, _ emit: (ImportEntry) -> Void) {
        var line = raw
        if logical.active {
            if let first = line.first, first == 0x20 || first == 0x09 {  // folded continuation
                let rest = UnsafeBufferPointer(rebasing: line.dropFirst())
                if logical.pendingName {
                    continueFoldedName(rest)
                } else {
                    logical.appendContinuation(rest, limit: maxLineBytes)
                }
                checkLength(line.count)
                return
            }
            if logical.quotedPrintable, logical.endsWithSoftBreak {  // 2.1 QP soft break
                logical.removeSoftBreak()
                logical.appendContinuation(line, limit: maxLineBytes)
                checkLength(line.count)
                return
            }
            if logical.base64Block {  // 2.1 base64: unindented lines until a blank one
                if line.isEmpty { logical.base64Block = false; return }
                if !line.contains(0x3A) { return }
            }
        }
        completeLogicalLine(emit)
        // A byte-order mark at the start of a line is not part of it: files
        // joined with `cat` carry one before each card (the first is skipped above).
        if line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF { line = UnsafeBufferPointer(rebasing: line.dropFirst(3)) }
        if line.isEmpty { return }
        logical.start(line, interesting: card != nil || startsBegin(line))
        checkLength(line.count)
    }

    /// A line over the bound skips the card, unless it belongs to a property
    /// that is not kept (a PHOTO written on one line, a long NOTE): the flag
    /// read is the one of the property this line is part of.
    @inline(__always)
    private mutating func checkLength(_ count: Int) {
        if count > maxLineBytes, !logical.dropped, card != nil, card!.problem == nil {
            card!.problem = "a line is longer than \(maxLineBytes) bytes"
        }
    }

    /// A fold inside the property name (`BD` CRLF ` AY:1971-10-11`, allowed by
    /// RFC 6350 §3.2): the name is read again from both pieces together.
    private mutating func continueFoldedName(_ rest: UnsafeBufferPointer<UInt8>) {
        var joined = logical.bytes
        joined.append(contentsOf: rest)
        logical.reset()
        joined.withUnsafeBufferPointer { logical.start($0, interesting: card != nil || startsBegin($0)) }
    }

    private func startsBegin(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        asciiCaseHasPrefix(line, "BEGIN")
    }

    private mutating func completeLogicalLine(_ emit: (ImportEntry) -> Void) {
        guard logical.active else { return }
        defer { logical.reset() }
        let name = logical.name
        if nestedDepth > 0 {  // inside an embedded (AGENT) vCard: track depth only
            if name == .begin, logical.valueIs("VCARD") { nestedDepth += 1 }
            if name == .end, logical.valueIs("VCARD") { nestedDepth -= 1 }
            return
        }
        switch name {
        case .begin where logical.valueIs("VCARD"):
            if card != nil {
                if lastPropertyWasEmptyAgent {
                    nestedDepth = 1
                    lastPropertyWasEmptyAgent = false
                    return
                }
                let open = card!
                emit(.skipped(CardProblem(cardNumber: open.number, uid: open.uid,
                                          message: "truncated: BEGIN:VCARD before this card's END:VCARD")))
            }
            cardNumber += 1
            card = CardBuilder(number: cardNumber)
        case .end where logical.valueIs("VCARD"):
            if let done = card.take() {  // moved out, not copied
                emit(done.build(today: today))
            }
        default:
            guard card != nil else { return }
            lastPropertyWasEmptyAgent = name == .agent && logical.valueIsEmpty
            guard name != .other, name != .dropped else { return }
            card!.size += logical.bytes.count
            if card!.size > maxCardBytes {
                if card!.problem == nil { card!.problem = "the card is larger than \(maxCardBytes) bytes" }
                return
            }
            switch name {
            case .abLabel:
                // Apple labels its dates `itemN.X-ABLabel:_$!<Anniversary>!$_` (or any
                // text) next to `itemN.X-ABDATE`; only grouped labels are kept.
                if logical.valueIs("_$!<ANNIVERSARY>!$_") {
                    card!.addAnniversaryLabel(group: logical.group)
                } else if !logical.group.isEmpty {
                    card!.addAppleLabel(logical.property(), group: logical.group)
                }
            case .kind:
                if logical.valueIs("GROUP") { card!.isGroup = true }
            case .abDate:
                card!.addAppleDate(logical.property(), group: logical.group)
            default:
                card!.add(name, logical.property())
            }
        }
    }
}

/// The property names the reader cares about; everything else is skipped cheaply.
enum PropertyName: UInt8 {
    case begin, end, version, uid, fn, n, bday, altBday, anniversary, tel, email, categories, lang, agent
    case deathDate  // DEATHDATE (RFC 6474), X-DEATHDATE
    case tz  // TZ: the contact's time zone (an IANA name or a UTC offset)
    case kind  // KIND, X-ADDRESSBOOKSERVER-KIND: a group card is not a person
    case abDate, abLabel  // Apple's `itemN.X-ABDATE` and the `itemN.X-ABLabel` that names it
    case dropped  // PHOTO, LOGO, SOUND, KEY: value discarded while streaming
    case other

    /// Classifies the name at the start of a line (group prefix removed, any
    /// case): compared only with the names of its length, no table walked.
    static func classify(_ name: UnsafeBufferPointer<UInt8>) -> PropertyName {
        func equals(_ word: StaticString) -> Bool { asciiCaseEquals(name, word) }
        switch name.count {
        case 1: return equals("N") ? .n : .other
        case 2: return equals("FN") ? .fn : equals("TZ") ? .tz : .other
        case 3: return equals("END") ? .end : equals("UID") ? .uid : equals("TEL") ? .tel : equals("KEY") ? .dropped : .other
        case 4:
            return equals("BDAY") ? .bday : equals("LANG") ? .lang : equals("LOGO") ? .dropped
                : equals("KIND") ? .kind : .other
        case 5:
            return equals("BEGIN") ? .begin : equals("EMAIL") ? .email : equals("AGENT") ? .agent
                : equals("PHOTO") || equals("SOUND") ? .dropped : .other
        case 7: return equals("VERSION") ? .version : .other
        case 8: return equals("X-ABDATE") ? .abDate : .other
        case 9:
            return equals("X-ALTBDAY") ? .altBday : equals("X-ABLABEL") ? .abLabel : equals("DEATHDATE") ? .deathDate
                : .other
        case 10: return equals("CATEGORIES") ? .categories : .other
        case 11: return equals("ANNIVERSARY") ? .anniversary : equals("X-DEATHDATE") ? .deathDate : .other
        case 13: return equals("X-ANNIVERSARY") ? .anniversary : .other
        case 16: return equals("X-MS-ANNIVERSARY") ? .anniversary : .other
        case 23: return equals("X-EVOLUTION-ANNIVERSARY") ? .anniversary : .other
        case 24: return equals("X-ADDRESSBOOKSERVER-KIND") ? .kind : .other
        case 28: return equals("X-KADDRESSBOOK-X-ANNIVERSARY") ? .anniversary : .other
        default: return .other
        }
    }
}

/// A property line split into name, parameters and raw value bytes.
struct RawProperty {
    var parameters: [(name: String, value: String)]
    var value: ArraySlice<UInt8>

    func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// The phone/email flags carried by TYPE values (2.1 bare parameters
    /// included) and PREF, read in one pass without building strings.
    var typeFlags: (cell: Bool, home: Bool, work: Bool, preferred: Bool) {
        var flags = (cell: false, home: false, work: false, preferred: false)
        for (name, value) in parameters {
            if name == "PREF" { flags.preferred = true; continue }
            guard name == "TYPE" else { continue }
            // The comma-separated items, read in place (no array of slices).
            func scan(_ bytes: UnsafeBufferPointer<UInt8>) {
                var start = bytes.startIndex
                while start < bytes.endIndex {
                    var end = start
                    while end < bytes.endIndex, bytes[end] != 0x2C { end += 1 }
                    let item = bytes[start..<end]
                    switch item.count {
                    case 4:
                        if asciiCaseEquals(item, "CELL") { flags.cell = true }
                        else if asciiCaseEquals(item, "HOME") { flags.home = true }
                        else if asciiCaseEquals(item, "WORK") { flags.work = true }
                        else if asciiCaseEquals(item, "PREF") { flags.preferred = true }
                    case 6:
                        if asciiCaseEquals(item, "MOBILE") || asciiCaseEquals(item, "IPHONE") { flags.cell = true }
                    default:
                        break
                    }
                    start = end + 1
                }
            }
            var value = value
            value.withUTF8 { scan($0) }
        }
        return flags
    }

    var isPreferred: Bool { typeFlags.preferred }
}

/// The logical line being assembled from folded physical lines.
struct LogicalLine {
    var active = false
    var name: PropertyName = .other
    var bytes: [UInt8] = []
    var dropped = false
    var quotedPrintable = false
    var base64Block = false
    /// The line so far has no `;` or `:`: its name may go on after a fold.
    var pendingName = false
    /// The group prefix (`item1`), kept only for X-ABDATE and X-ABLabel.
    var group: [UInt8] = []
    var endsWithSoftBreak: Bool { bytes.last == 0x3D }
    var valueIsEmpty: Bool { colon.map { $0 == bytes.count - 1 } ?? true }
    private var colon: Int?

    mutating func reset() {
        active = false
        bytes.removeAll(keepingCapacity: true)
        dropped = false
        quotedPrintable = false
        base64Block = false
        pendingName = false
        if !group.isEmpty { group.removeAll() }
        colon = nil
        name = .other
    }

    /// Longest first piece of a line kept while waiting for the rest of its
    /// folded name; a longer line without `;` or `:` is no property.
    static let maxPendingName = 128

    mutating func start(_ line: UnsafeBufferPointer<UInt8>, interesting: Bool) {
        active = true
        // Name: up to the first ';' or ':', after any group prefix.
        var end = 0
        var groupEnd = 0
        while end < line.count, line[end] != 0x3B, line[end] != 0x3A {
            if line[end] == 0x2E { groupEnd = end + 1 }
            end += 1
        }
        if end == line.count, line.count <= LogicalLine.maxPendingName {
            // No `;` or `:` yet: the name may be folded; decided when the next line comes.
            pendingName = true
            bytes.append(contentsOf: line)
            return
        }
        name = interesting ? PropertyName.classify(UnsafeBufferPointer(rebasing: line[groupEnd..<end])) : .other
        switch name {
        case .other:
            // Not kept, but 2.1 QP soft breaks and base64 blocks must still be followed.
            let header = headerEnd(line)
            quotedPrintable = containsQP(line, upTo: header)
            base64Block = containsBase64(line, upTo: header) && header == line.count - 1
            dropped = true
            if quotedPrintable, let last = line.last, last == 0x3D { bytes = [0x3D] }
        case .dropped:
            let header = headerEnd(line)
            base64Block = containsBase64(line, upTo: header)
            dropped = true
        default:
            if name == .abDate || name == .abLabel, groupEnd > 1 {  // group names ignore case: kept in upper case
                group.append(contentsOf: line[..<(groupEnd - 1)].lazy.map(asciiUpper))
            }
            bytes.append(contentsOf: line[groupEnd...])
            colon = findColon()
            let header = colon ?? bytes.count
            quotedPrintable = bytes.withUnsafeBufferPointer { containsQP($0, upTo: header) }
        }
    }

    mutating func appendContinuation(_ line: UnsafeBufferPointer<UInt8>, limit: Int) {
        if dropped {
            if quotedPrintable { bytes = line.last == 0x3D ? [0x3D] : [] }
            return
        }
        if bytes.count + line.count <= limit + 1 { bytes.append(contentsOf: line) }
        if colon == nil { colon = findColon() }
    }

    mutating func removeSoftBreak() {
        if !bytes.isEmpty { bytes.removeLast() }
    }

    func valueIs(_ word: StaticString) -> Bool {
        guard let colon else { return false }
        var trimmed = bytes[(colon + 1)...]
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        return asciiCaseEquals(trimmed, word)
    }

    /// Index of the ':' that ends the parameters (quoted parameter values may hold ':').
    private func findColon() -> Int? {
        var quoted = false
        for (index, byte) in bytes.enumerated() {
            if byte == 0x22 { quoted.toggle() } else if byte == 0x3A, !quoted { return index }
        }
        return nil
    }

    private func headerEnd(_ line: UnsafeBufferPointer<UInt8>) -> Int {
        var quoted = false
        for (index, byte) in line.enumerated() {
            if byte == 0x22 { quoted.toggle() } else if byte == 0x3A, !quoted { return index }
        }
        return line.count
    }

    private func containsQP(_ bytes: UnsafeBufferPointer<UInt8>, upTo end: Int) -> Bool {
        LogicalLine.contains(word: LogicalLine.qp, in: bytes, upTo: end)
    }

    private func containsBase64(_ bytes: UnsafeBufferPointer<UInt8>, upTo end: Int) -> Bool {
        LogicalLine.contains(word: LogicalLine.base64, in: bytes, upTo: end)
            || LogicalLine.contains(word: LogicalLine.encodingB, in: bytes, upTo: end)
    }

    private static let qp: StaticString = "QUOTED-PRINTABLE"
    private static let base64: StaticString = "BASE64"
    private static let encodingB: StaticString = "ENCODING=B"

    /// Whether the parameters (`bytes[..<end]`) hold `word` in any case. A line
    /// without parameters (no ';') is answered without a scan.
    private static func contains(word: StaticString, in bytes: UnsafeBufferPointer<UInt8>, upTo end: Int) -> Bool {
        let word = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        let end = min(end, bytes.count)
        guard end >= word.count, let base = bytes.baseAddress, memchr(base, 0x3B, end) != nil else { return false }
        let first = word[0]
        outer: for start in 0...(end - word.count) where asciiUpper(bytes[start]) == first {
            for i in 1..<word.count where asciiUpper(bytes[start + i]) != word[i] { continue outer }
            return true
        }
        return false
    }

    /// Splits the assembled line into parameters and value.
    func property() -> RawProperty {
        let colon = self.colon ?? bytes.count
        var parameters: [(name: String, value: String)] = []
        // Parameters start after the name (first ';' before the colon).
        var index = 0
        while index < colon, bytes[index] != 0x3B { index += 1 }
        while index < colon {
            index += 1  // skip ';'
            var start = index
            var quoted = false
            var key: String?
            var value = ""
            while index < colon {
                let byte = bytes[index]
                if byte == 0x22 { quoted.toggle() } else if !quoted {
                    if byte == 0x3B { break }
                    if byte == 0x3D, key == nil {
                        key = String(decoding: bytes[start..<index], as: UTF8.self).uppercased()
                        start = index + 1
                    }
                }
                index += 1
            }
            value = String(decoding: bytes[start..<index], as: UTF8.self)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            if let key {
                parameters.append((key, value))
            } else if !value.isEmpty {
                // vCard 2.1 bare parameter: `TEL;CELL;PREF:` or `;QUOTED-PRINTABLE`.
                let upper = value.uppercased()
                if upper == "QUOTED-PRINTABLE" || upper == "BASE64" || upper == "8BIT" || upper == "7BIT" {
                    parameters.append(("ENCODING", upper))
                } else {
                    parameters.append(("TYPE", upper))
                }
            }
        }
        let valueStart = min(colon + 1, bytes.count)
        return RawProperty(parameters: parameters, value: bytes[valueStart...])
    }
}

/// ASCII uppercase of one byte; other bytes unchanged.
@inline(__always)
func asciiUpper(_ byte: UInt8) -> UInt8 {
    byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte
}

/// Whether `bytes` start with `word` (ASCII, written in upper case) in any case.
func asciiCaseHasPrefix<C: Collection<UInt8>>(_ bytes: C, _ word: StaticString) -> Bool {
    let target = word.utf8Start
    let count = word.utf8CodeUnitCount
    var index = 0
    for byte in bytes {
        if index == count { return true }
        if asciiUpper(byte) != target[index] { return false }
        index += 1
    }
    return index == count
}

/// Whether `bytes` are `word` (ASCII, written in upper case) in any case.
func asciiCaseEquals<C: Collection<UInt8>>(_ bytes: C, _ word: StaticString) -> Bool {
    bytes.count == word.utf8CodeUnitCount && asciiCaseHasPrefix(bytes, word)
}
