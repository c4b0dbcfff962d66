import Foundation

/// Google Contacts CSV export (both the old "Name,Given Name,...,Group Membership" header
/// and the 2023+ "First Name,Middle Name,Last Name,...,Labels" header).
///
/// A pure parser: it reads the text it is handed and reports one `ImportEntry` per data row.
public struct GoogleContactsCSV: Sendable {
    /// The text does not start with a Google Contacts CSV header.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String

        public init(message: String) {
            self.message = message
        }

        public var description: String { message }
    }

    /// Whether the first line looks like a Google Contacts header (used to tell CSV from vCard).
    public static func looksLikeHeader(_ firstLine: String) -> Bool {
        var reader = Reader(Array(firstLine.utf8))
        guard let fields = reader.nextRecord(needed: nil) else { return false }
        return Layout(header: fields) != nil
    }

    /// Parses a whole CSV text (it is small compared to vCard exports; RFC 4180: quoted fields,
    /// "" escapes, CRLF or LF, newlines inside quoted fields, a UTF-8 BOM at the start).
    /// Calls `body` once per data row, in order. Never throws for a bad row: a row that cannot be
    /// used becomes `.skipped(CardProblem(cardNumber: rowNumber, message: ...))`; a bad Birthday
    /// value keeps the card without a birthday and adds a CardProblem to `problems`.
    /// Throws `GoogleContactsCSV.Error` only when the header is not a Google Contacts header.
    ///
    /// Rows are numbered from 1 after the header; completely blank lines are not rows.
    public static func parse(_ text: String, today: LocalDate? = nil, _ body: (ImportEntry) -> Void) throws {
        var reader = Reader(Array(text.utf8))
        guard let header = reader.nextRecord(needed: nil) else {
            throw Error(message: "empty file: no Google Contacts CSV header")
        }
        guard let layout = Layout(header: header) else {
            let shown = clean(header.joined(separator: ","))
            let snippet = shown.count > 60 ? String(shown.prefix(60)) + "…" : shown
            throw Error(message: "not a Google Contacts CSV header: \"\(snippet)\"")
        }
        var rowNumber = 0
        while let fields = reader.nextRecord(needed: layout.needed) {
            rowNumber += 1
            body(layout.entry(fields: fields, rowNumber: rowNumber, today: today))
        }
    }
}

// MARK: - Rows to cards

extension GoogleContactsCSV {
    /// One numbered column group such as "E-mail 2 - Type" / "E-mail 2 - Value".
    private struct Group {
        var number: Int
        var label: Int?
        var value: Int
    }

    /// Where the columns this parser reads sit in the header.
    private struct Layout {
        var isOld: Bool
        var column: [String: Int] = [:]
        var emails: [Group] = []
        var phones: [Group] = []
        var events: [Group] = []
        /// Which columns are read at all (others are not turned into strings).
        var needed: [Bool]

        init?(header: [String]) {
            var column: [String: Int] = [:]
            for (index, raw) in header.enumerated() {
                let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                if column[name] == nil { column[name] = index }
            }
            let hasNumberedLabel = column.keys.contains {
                Layout.numbered($0, prefix: "E-mail")?.suffix == "Label"
                    || Layout.numbered($0, prefix: "Phone")?.suffix == "Label"
            }
            if column["Name"] != nil,
               column["Given Name"] != nil || column["Family Name"] != nil || column["Group Membership"] != nil {
                isOld = true
            } else if column["First Name"] != nil, column["Last Name"] != nil,
                      column["Labels"] != nil || hasNumberedLabel {
                isOld = false
            } else {
                return nil
            }
            self.column = column
            emails = Layout.groups(in: header, prefix: "E-mail")
            phones = Layout.groups(in: header, prefix: "Phone")
            events = Layout.groups(in: header, prefix: "Event")

            var needed = [Bool](repeating: false, count: header.count)
            let named = isOld
                ? ["Name", "Given Name", "Additional Name", "Family Name", "Name Prefix", "Name Suffix",
                   "Birthday", "Group Membership", "Organization 1 - Name", "Organization Name"]
                : ["First Name", "Middle Name", "Last Name", "Name Prefix", "Name Suffix",
                   "Birthday", "Labels", "Organization Name", "Organization 1 - Name"]
            for name in named { if let index = column[name] { needed[index] = true } }
            for group in emails + phones + events {
                needed[group.value] = true
                if let label = group.label { needed[label] = true }
            }
            self.needed = needed
        }

        /// Splits "E-mail 12 - Value" into (12, "Value") for the prefix "E-mail".
        static func numbered(_ name: String, prefix: String) -> (number: Int, suffix: Substring)? {
            guard name.hasPrefix(prefix + " ") else { return nil }
            let rest = name.dropFirst(prefix.count + 1)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6, let number = Int(digits) else { return nil }
            let tail = rest.dropFirst(digits.count)
            guard tail.hasPrefix(" - ") else { return nil }
            return (number, tail.dropFirst(3))
        }

        /// The numbered groups of a prefix that have a value column, ordered by number.
        static func groups(in header: [String], prefix: String) -> [Group] {
            var labels: [Int: Int] = [:]
            var values: [Int: Int] = [:]
            for (index, raw) in header.enumerated() {
                let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                guard let (number, suffix) = numbered(name, prefix: prefix) else { continue }
                switch suffix {
                case "Value": if values[number] == nil { values[number] = index }
                case "Type", "Label": if labels[number] == nil { labels[number] = index }
                default: break
                }
            }
            return values.keys.sorted().compactMap { number in
                values[number].map { Group(number: number, label: labels[number], value: $0) }
            }
        }

        /// The cell of a named column ("" when the column or the cell is missing).
        func cell(_ fields: [String], _ name: String) -> String {
            guard let index = column[name] else { return "" }
            return GoogleContactsCSV.cell(fields, index)
        }

        func entry(fields: [String], rowNumber: Int, today: LocalDate? = nil) -> ImportEntry {
            var problems: [CardProblem] = []

            // Name.
            var name: String
            let firstName: String
            if isOld {
                name = clean(cell(fields, "Name"))
                if name.isEmpty {
                    name = joinedName(fields, ["Name Prefix", "Given Name", "Additional Name", "Family Name",
                                               "Name Suffix"])
                }
                firstName = clean(cell(fields, "Given Name"))
            } else {
                name = joinedName(fields, ["Name Prefix", "First Name", "Middle Name", "Last Name", "Name Suffix"])
                firstName = clean(cell(fields, "First Name"))
            }

            // Birthday.
            let birthdayCell = cell(fields, "Birthday")
            var birthday: Birthday?
            switch GoogleContactsCSV.date(birthdayCell) {
            case .empty: break
            case .date(let date):
                if let problem = date.futureProblem(today: today, property: "Birthday") {
                    problems.append(CardProblem(cardNumber: rowNumber, message: problem))
                } else {
                    birthday = date
                }
            case .invalid(let shown):
                problems.append(CardProblem(cardNumber: rowNumber, message: "Birthday \"\(shown)\" is not a date"))
            }

            // Emails and phones.
            var emails: [Email] = []
            for group in self.emails {
                let (_, preferred) = GoogleContactsCSV.label(group.label.map { GoogleContactsCSV.cell(fields, $0) })
                for (offset, address) in values(GoogleContactsCSV.cell(fields, group.value)).enumerated() {
                    emails.append(Email(address: address, preferred: preferred && offset == 0))
                }
            }
            var phones: [Phone] = []
            for group in self.phones {
                let (label, preferred) = GoogleContactsCSV.label(group.label.map { GoogleContactsCSV.cell(fields, $0) })
                let kind = GoogleContactsCSV.phoneKind(label)
                for (offset, number) in values(GoogleContactsCSV.cell(fields, group.value)).enumerated() {
                    phones.append(Phone(number: number, kind: kind, preferred: preferred && offset == 0))
                }
            }

            if name.isEmpty, emails.isEmpty, phones.isEmpty,
               birthdayCell.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                return .skipped(CardProblem(cardNumber: rowNumber, message: "empty row"))
            }

            // Categories.
            var categories: [String] = []
            for raw in values(cell(fields, isOld ? "Group Membership" : "Labels")) {
                var category = Substring(raw)
                if category.hasPrefix("* ") { category = category.dropFirst(2) }
                let cleaned = clean(String(category))
                let key = cleaned.lowercased()
                guard !cleaned.isEmpty, key != "mycontacts", key != "my contacts",
                      !categories.contains(cleaned) else { continue }
                categories.append(cleaned)
            }

            // Anniversary: the first event labelled Anniversary with a usable date;
            // every other event with a date is a labelled date ("Other" without a type).
            var anniversary: Birthday?
            var labelledDates: [LabelledDate] = []
            for group in events {
                let (label, _) = GoogleContactsCSV.label(group.label.map { GoogleContactsCSV.cell(fields, $0) })
                guard case .date(let date) = GoogleContactsCSV.date(GoogleContactsCSV.cell(fields, group.value)) else {
                    continue
                }
                if label.lowercased() == "anniversary" {
                    if anniversary == nil { anniversary = date }
                    continue
                }
                let unique = LabelledDate.uniqueLabel(clean(label), among: labelledDates.map(\.label))
                labelledDates.append(LabelledDate(label: unique, date: date))
            }

            // Identity: no UID in CSV, so always derived from the person's name.
            let id = ContactIdentity.derivedID(name: name, firstEmail: emails.first?.address,
                                               firstPhone: phones.first?.number)
            var displayName = name
            if displayName.isEmpty {
                displayName = clean(cell(fields, "Organization 1 - Name"))
                if displayName.isEmpty { displayName = clean(cell(fields, "Organization Name")) }
                if displayName.isEmpty { displayName = clean(emails.first?.address ?? "") }
                if displayName.isEmpty { displayName = ContactIdentity.unknownName(id: id) }
            }

            var card = ContactCard(
                id: id, hasUID: false, name: displayName, firstName: firstName.isEmpty ? nil : firstName,
                birthday: birthday, anniversary: anniversary, phones: phones, emails: emails,
                categories: categories, language: nil)
            card.labelledDates = labelledDates
            return .card(card, problems: problems)
        }

        private func joinedName(_ fields: [String], _ columns: [String]) -> String {
            columns.map { clean(cell(fields, $0)) }.filter { !$0.isEmpty }.joined(separator: " ")
        }

        /// The values of a cell that may hold several separated by " ::: ", trimmed, empties dropped.
        private func values(_ cell: String) -> [String] {
            guard !cell.isEmpty else { return [] }
            return cell.components(separatedBy: " ::: ")
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }
        }
    }

    private static func cell(_ fields: [String], _ index: Int) -> String {
        index < fields.count ? fields[index] : ""
    }

    /// A Type/Label cell without its "* " (preferred) marker, and whether it had one.
    private static func label(_ raw: String?) -> (label: String, preferred: Bool) {
        let trimmed = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("* ") {
            return (trimmed.dropFirst(2).trimmingCharacters(in: .whitespaces), true)
        }
        return (trimmed, false)
    }

    private static func phoneKind(_ label: String) -> Phone.Kind {
        switch label.lowercased() {
        case "mobile", "cell": return .cell
        case "home": return .home
        case "work": return .work
        default: return .other
        }
    }

    private enum DateCell {
        case empty
        case date(Birthday)
        /// Not a date; holds the value as shown in a problem message.
        case invalid(String)
    }

    /// Reads `1990-03-15` or `--03-15` (surrounding white space allowed); year 1604 or 0000
    /// means the year is unknown.
    private static func date(_ raw: String) -> DateCell {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty { return .empty }
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let dash = UInt8(ascii: "-")
        var result: Birthday?
        if bytes.count == 7, bytes[0] == dash, bytes[1] == dash, bytes[4] == dash,
           let month = number(2..<4), let day = number(5..<7) {
            result = Birthday(month: month, day: day)
        } else if bytes.count == 10, bytes[4] == dash, bytes[7] == dash,
                  let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) {
            result = Birthday(month: month, day: day, year: Birthday.placeholderYears.contains(year) ? nil : year)
        }
        if let result { return .date(result) }
        return .invalid(clean(text))
    }

    /// Replaces control characters and other white space with a space, collapses runs of
    /// spaces and trims; drops BiDi override and isolate controls (`OneLine.isBidiControl`).
    static func clean(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars where !OneLine.isBidiControl(scalar) {
            let value = scalar.value
            if value <= 0x20 || (0x7F...0x9F).contains(value) || scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            out.append(scalar)
        }
        return String(out)
    }
}

// MARK: - RFC 4180 reader

extension GoogleContactsCSV {
    /// Reads CSV records from UTF-8 bytes: quoted fields with "" escapes, CRLF, LF or CR line
    /// ends, line breaks inside quoted fields, a UTF-8 BOM at the start. Lenient: an
    /// unterminated quote runs to the end of the text; text after a closing quote is kept.
    private struct Reader {
        private let bytes: [UInt8]
        private var index = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        }

        /// The next record (blank lines skipped), or nil at the end. Fields whose `needed` flag is false (or beyond
        /// it) come back empty without being decoded; `needed == nil` decodes every field.
        mutating func nextRecord(needed: [Bool]?) -> [String]? {
            let count = bytes.count
            let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","),
                cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
            // Blank lines are not records.
            while index < count, bytes[index] == cr || bytes[index] == lf { index += 1 }
            guard index < count else { return nil }
            var fields: [String] = []
            if let needed { fields.reserveCapacity(needed.count) }
            var field: [UInt8] = []
            var inQuotes = false
            var atFieldStart = true

            func finishField() {
                let wanted = needed.map { fields.count < $0.count && $0[fields.count] } ?? true
                fields.append(wanted ? String(decoding: field, as: UTF8.self) : "")
                field.removeAll(keepingCapacity: true)
                atFieldStart = true
            }

            while index < count {
                let byte = bytes[index]
                index += 1
                if inQuotes {
                    if byte == quote {
                        if index < count, bytes[index] == quote {
                            field.append(quote)
                            index += 1
                        } else {
                            inQuotes = false
                        }
                    } else {
                        field.append(byte)
                    }
                    continue
                }
                switch byte {
                case quote where atFieldStart:
                    inQuotes = true
                    atFieldStart = false
                case comma:
                    finishField()
                case cr:
                    if index < count, bytes[index] == lf { index += 1 }
                    finishField()
                    return fields
                case lf:
                    finishField()
                    return fields
                default:
                    field.append(byte)
                    atFieldStart = false
                }
            }
            finishField()
            return fields
        }
    }
}
