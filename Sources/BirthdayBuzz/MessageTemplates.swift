import Foundation
// Linked explicitly: with --static-swift-stdlib, DateFormatter finds no locale data without it (DESIGN §9).
#if canImport(FoundationInternationalization)
import FoundationInternationalization
#endif
import Mustache
import Synchronization

/// A template that cannot be used, with where it is: `file:line:column: message`.
///
/// `line` and `column` are 1-based; 0 when the error is about the whole file.
public struct TemplateError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var column: Int
    public var message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        guard line > 0 else { return "\(file): \(message)" }
        guard column > 0 else { return "\(file):\(line): \(message)" }
        return "\(file):\(line):\(column): \(message)"
    }
}

/// The message templates (DESIGN §6): the shipped ones plus the user's overrides,
/// all compiled and checked when loaded, so a broken one stops the program before
/// anything is sent.
///
/// A template file is a title (subject) line, one blank line, then the body.
/// Rendering is plain text: values are never HTML-escaped.
public struct MessageTemplates: Sendable {
    /// Which message a template is for.
    public enum Kind: String, Sendable, CaseIterable {
        /// To the user about a contact's birthday. Variables: `name`, `first_name`,
        /// `days_until`, `age` (absent when unknown), `date` (localized weekday, day
        /// and month), and the booleans `today`, `tomorrow`, `later` (2 days or more)
        /// and `has_age`; `gift_ideas` and `notes` (lists of text, open gift ideas and
        /// notes about the contact) with `has_gift_ideas` and `has_notes`.
        case reminder
        /// To the user about a contact's anniversary (DESIGN §3b). Variables as for
        /// `reminder`, with `years` (absent when the year is unknown) and `has_years`
        /// instead of `age` and `has_age`.
        case anniversary
        /// To a contact, asking for their birthday. Variables: `first_name`, `name`,
        /// `sender_name` (absent when not configured).
        case ask
        /// To a contact on their birthday (DESIGN §6a). Variables: `first_name`,
        /// `name`, `age` and `has_age` (absent when the year is unknown), `sender_name`.
        case wish

        /// The variables a template of this kind may use; anything else is a typo.
        var variables: Set<String> {
            switch self {
            case .reminder: ["name", "first_name", "days_until", "age", "date", "today", "tomorrow", "later", "has_age",
                             "gift_ideas", "has_gift_ideas", "notes", "has_notes"]
            case .anniversary: ["name", "first_name", "days_until", "years", "date", "today", "tomorrow", "later",
                                "has_years", "gift_ideas", "has_gift_ideas", "notes", "has_notes"]
            case .ask: ["first_name", "name", "sender_name"]
            case .wish: ["first_name", "name", "age", "has_age", "sender_name"]
            }
        }
    }

    private struct Compiled: Sendable {
        let title: ChunkedTemplate
        let body: ChunkedTemplate
        let file: String
        /// `name` and `first_name` appear only as plain `{{name}}` tags (no sections,
        /// transforms or dotted names, no set-delimiter tags): the text around them
        /// does not depend on them, so it can be rendered once and reused.
        let namesArePlain: Bool
    }

    /// By `"<canonical locale>/<kind>"`, e.g. `"de-AT/reminder"`.
    private let templates: [String: Compiled]

    /// Reminder texts rendered once per (locale, days, age, date), with the names left as holes.
    private let reminderTexts = ReminderTextCache()

    /// The locale every lookup ends with; it must exist for every kind.
    static let lastResort = "en"

    /// Loads the shipped templates, then the overrides in
    /// `overrideDirectory/<locale>/<kind>.mustache` (a missing folder is fine).
    /// Every template is compiled and checked here.
    public init(overrideDirectory: String?, shipped: [String: String] = ShippedTemplates.all) throws(TemplateError) {
        try self.init(overrideDirectories: overrideDirectory.map { [$0] } ?? [], shipped: shipped)
    }

    /// Shipped templates, overridden by those found in `overrideDirectories`; a
    /// folder earlier in the list wins over a later one.
    public init(overrideDirectories: [String], shipped: [String: String] = ShippedTemplates.all) throws(TemplateError) {
        var templates: [String: Compiled] = [:]
        for (key, text) in shipped.sorted(by: { $0.key < $1.key }) {
            let file = "templates/\(key).mustache"
            let parts = key.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let locale = Self.canonicalTag(String(parts[0])),
                  let kind = Kind(rawValue: String(parts[1])) else {
                throw TemplateError(file: file, line: 0, column: 0,
                                    message: "not a <locale>/<kind> template name (kinds: reminder, anniversary, ask, wish)")
            }
            templates["\(locale)/\(kind.rawValue)"] = try Self.compile(text, kind: kind, file: file)
        }
        for directory in overrideDirectories.reversed() where !directory.isEmpty {
            for (key, compiled) in try Self.loadOverrides(from: directory) {
                templates[key] = compiled
            }
        }
        for kind in Kind.allCases where templates["\(Self.lastResort)/\(kind.rawValue)"] == nil {
            throw TemplateError(file: "templates/\(Self.lastResort)/\(kind.rawValue).mustache", line: 0, column: 0,
                                message: "missing: every kind needs an English template to fall back to")
        }
        self.templates = templates
    }

    /// The locales that have a template of `kind` (canonical BCP 47 tags), sorted.
    public func locales(for kind: Kind) -> [String] {
        templates.keys.compactMap { key in
            let parts = key.split(separator: "/")
            return parts.count == 2 && parts[1] == kind.rawValue ? String(parts[0]) : nil
        }.sorted()
    }

    /// The file a template was loaded from: an override's path, or `templates/<locale>/<kind>.mustache`
    /// for a shipped one; nil when there is no template for exactly that locale.
    public func source(kind: Kind, locale: String) -> String? {
        guard let tag = Self.canonicalTag(locale) else { return nil }
        return templates["\(tag)/\(kind.rawValue)"]?.file
    }

    /// Which locale's template is used for `preferred` (most wanted first): each tag,
    /// then its shorter forms (`de-AT` → `de`), in order, then `en`. Tags match
    /// case-insensitively; POSIX forms like `de_AT.UTF-8` are accepted.
    ///
    /// Reminders pass `[general.locale]`; asks pass `[contact LANG, general.locale]`.
    public func resolvedLocale(kind: Kind, preferred: [String]) -> String {
        for tag in Self.lookupChain(preferred) where templates["\(tag)/\(kind.rawValue)"] != nil {
            return tag
        }
        return Self.lastResort
    }

    /// Renders a reminder to the user in `locale` (`general.locale`), falling back to its
    /// language, then English. `age` is the age reached on that birthday (for an
    /// anniversary, the years), when known; `giftIdeas` and `notes` are the contact's.
    public func renderReminder(name: String, firstName: String, daysUntil: Int, age: Int?,
                               date: LocalDate, locale: String, occasion: Occasion = .birthday,
                               giftIdeas: [String] = [], notes: [String] = []) -> (title: String, body: String, locale: String) {
        let kind: Kind = occasion == .birthday ? .reminder : .anniversary
        let first = Self.nonBlank(firstName) ?? name
        let shownName = Self.nonBlank(name) ?? first
        guard giftIdeas.isEmpty, notes.isEmpty else {
            // Texts with the contact's own lists are not shared with anyone: no cache.
            let used = resolvedLocale(kind: kind, preferred: [locale])
            let values = Self.reminderValues(kind: kind, name: shownName, firstName: first, daysUntil: daysUntil, age: age,
                                             date: Self.format(date, locale: Self.dateLocale(requested: locale, used: used)),
                                             giftIdeas: giftIdeas, notes: notes)
            return render(kind, locale: used, values: values, fallbackTitle: name)
        }
        // A batch of reminders differs mostly in the names: the rest of the text
        // comes from a cache, rendered once with holes where the names go.
        let key = ReminderTextCache.Key(locale: locale, daysUntil: daysUntil, age: age, date: date, kind: kind)
        if let text = reminderTexts.entries.withLock({ $0[key] }) {
            return Self.finish(text, name: shownName, firstName: first, fallbackTitle: name)
        }
        let used = resolvedLocale(kind: kind, preferred: [locale])
        let dateText = Self.format(date, locale: Self.dateLocale(requested: locale, used: used))
        guard let compiled = templates["\(used)/\(kind.rawValue)"], compiled.namesArePlain,
              !ReminderTextCache.containsHole(dateText) else {
            let values = Self.reminderValues(kind: kind, name: shownName, firstName: first, daysUntil: daysUntil, age: age,
                                             date: dateText)
            return render(kind, locale: used, values: values, fallbackTitle: name)
        }
        let holes = Self.reminderValues(kind: kind, name: ReminderTextCache.nameHole, firstName: ReminderTextCache.firstNameHole,
                                        daysUntil: daysUntil, age: age, date: dateText)
        let text = ReminderTextCache.Text(title: ReminderTextCache.pieces(compiled.title.render(holes)),
                                          body: ReminderTextCache.pieces(compiled.body.render(holes)), locale: used)
        reminderTexts.entries.withLock { cache in
            if cache.count > 4_096 { cache.removeAll() }
            cache[key] = text
        }
        return Self.finish(text, name: shownName, firstName: first, fallbackTitle: name)
    }

    /// `renderReminder` without the cache: every value through Mustache.
    func renderReminderUncached(name: String, firstName: String, daysUntil: Int, age: Int?,
                                date: LocalDate, locale: String) -> (title: String, body: String, locale: String) {
        let used = resolvedLocale(kind: .reminder, preferred: [locale])
        let first = Self.nonBlank(firstName) ?? name
        let values = Self.reminderValues(kind: .reminder, name: Self.nonBlank(name) ?? first, firstName: first,
                                         daysUntil: daysUntil, age: age,
                                         date: Self.format(date, locale: Self.dateLocale(requested: locale, used: used)))
        return render(.reminder, locale: used, values: values, fallbackTitle: name)
    }

    static func reminderValues(kind: Kind, name: String, firstName: String, daysUntil: Int, age: Int?,
                                       date: String, giftIdeas: [String] = [], notes: [String] = []) -> [String: Any] {
        var values: [String: Any] = [
            "name": name,
            "first_name": firstName,
            "days_until": daysUntil,
            "date": date,
            "today": daysUntil == 0,
            "tomorrow": daysUntil == 1,
            "later": daysUntil > 1,
            "gift_ideas": giftIdeas,
            "has_gift_ideas": !giftIdeas.isEmpty,
            "notes": notes,
            "has_notes": !notes.isEmpty,
        ]
        if kind == .anniversary {
            values["has_years"] = age != nil
            if let age { values["years"] = age }
        } else {
            values["has_age"] = age != nil
            if let age { values["age"] = age }
        }
        return values
    }

    /// Renders an ask to a contact in the first of `locales` that has a template (each with
    /// its language fallback, then English): pass `[contact LANG, general.locale]`.
    public func renderAsk(firstName: String, name: String, senderName: String?,
                          locales: [String]) -> (title: String, body: String, locale: String) {
        let used = resolvedLocale(kind: .ask, preferred: locales)
        var values: [String: Any] = [
            "first_name": Self.nonBlank(firstName) ?? name,
            "name": Self.nonBlank(name) ?? firstName,
        ]
        if let sender = senderName.flatMap(Self.nonBlank) { values["sender_name"] = sender }
        return render(.ask, locale: used, values: values, fallbackTitle: name)
    }

    /// Renders a birthday wish to a contact, in the first of `locales` that has a
    /// template (as `renderAsk`); `age` is the age turned, when known.
    public func renderWish(firstName: String, name: String, age: Int?, senderName: String?,
                           locales: [String]) -> (title: String, body: String, locale: String) {
        let used = resolvedLocale(kind: .wish, preferred: locales)
        var values: [String: Any] = [
            "first_name": Self.nonBlank(firstName) ?? name,
            "name": Self.nonBlank(name) ?? firstName,
            "has_age": age != nil,
        ]
        if let age { values["age"] = age }
        if let sender = senderName.flatMap(Self.nonBlank) { values["sender_name"] = sender }
        return render(.wish, locale: used, values: values, fallbackTitle: name)
    }

    private func render(_ kind: Kind, locale: String, values: [String: Any],
                        fallbackTitle: String) -> (title: String, body: String, locale: String) {
        guard let compiled = templates["\(locale)/\(kind.rawValue)"] else {
            // Unreachable: init guarantees an English template of every kind.
            return (fallbackTitle, "", locale)
        }
        return Self.cleaned(title: compiled.title.render(values), body: compiled.body.render(values), locale: locale,
                            fallbackTitle: fallbackTitle)
    }

    /// The names put into a cached text, then the same clean-up as `render`.
    private static func finish(_ text: ReminderTextCache.Text, name: String, firstName: String,
                               fallbackTitle: String) -> (title: String, body: String, locale: String) {
        cleaned(title: ReminderTextCache.assemble(text.title, name: name, firstName: firstName),
                body: ReminderTextCache.assemble(text.body, name: name, firstName: firstName),
                locale: text.locale, fallbackTitle: fallbackTitle)
    }

    /// A rendered title on one line (CR/LF become spaces: VCardText.singleLine, which
    /// also trims — and is cheap), else `fallbackTitle`; the body without trailing space.
    private static func cleaned(title: String, body: String, locale: String,
                                fallbackTitle: String) -> (title: String, body: String, locale: String) {
        let title = VCardText.singleLine(title)
        var body = body
        while let last = body.last, last.isWhitespace { body.removeLast() }
        return (title.isEmpty ? fallbackTitle : title, body, locale)
    }

    private static func nonBlank(_ text: String) -> String? {
        text.allSatisfy(\.isWhitespace) ? nil : text
    }
}

/// Rendered reminder texts with holes where `name` and `first_name` go.
///
/// A hole is a private-use scalar rendered in the name's place; templates
/// containing one, or using the names other than as plain tags, are never cached.
final class ReminderTextCache: Sendable {
    struct Key: Hashable, Sendable {
        let locale: String
        let daysUntil: Int
        let age: Int?
        let date: LocalDate
        var kind: MessageTemplates.Kind = .reminder
    }

    enum Piece: Sendable, Equatable {
        case text(String)
        case name
        case firstName
    }

    struct Text: Sendable {
        let title: [Piece]
        let body: [Piece]
        let locale: String
    }

    let entries = Mutex<[Key: Text]>([:])

    static let nameHole = "\u{E000}"
    static let firstNameHole = "\u{E001}"

    static func containsHole(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { $0 == "\u{E000}" || $0 == "\u{E001}" }
    }

    /// Splits a text rendered with holes into text and holes.
    static func pieces(_ rendered: String) -> [Piece] {
        var pieces: [Piece] = []
        var start = rendered.startIndex
        var index = start
        while index < rendered.endIndex {
            let scalar = rendered.unicodeScalars[index]
            let hole: Piece? = scalar == "\u{E000}" ? .name : scalar == "\u{E001}" ? .firstName : nil
            let next = rendered.unicodeScalars.index(after: index)
            if let hole {
                if start < index { pieces.append(.text(String(rendered.unicodeScalars[start..<index]))) }
                pieces.append(hole)
                start = next
            }
            index = next
        }
        if start < rendered.endIndex { pieces.append(.text(String(rendered.unicodeScalars[start...]))) }
        return pieces
    }

    static func assemble(_ pieces: [Piece], name: String, firstName: String) -> String {
        var out = ""
        var count = 0
        for piece in pieces {
            switch piece {
            case .text(let text): count += text.utf8.count
            case .name: count += name.utf8.count
            case .firstName: count += firstName.utf8.count
            }
        }
        out.reserveCapacity(count)
        for piece in pieces {
            switch piece {
            case .text(let text): out += text
            case .name: out += name
            case .firstName: out += firstName
            }
        }
        return out
    }

    /// True when `name` and `first_name` occur only as plain variable tags
    /// (`{{name}}`, `{{{name}}}`, `{{& name}}`) and nothing else depends on them:
    /// no `.` or transforms anywhere, no set-delimiter tags, no holes in the text.
    /// (What `MessageTemplates.checkTags` finds while it checks a reminder template.)
    static func namesArePlain(in text: String) -> Bool {
        (try? MessageTemplates.checkTags(text, firstLine: 1, kind: .reminder, file: ""))?.namesArePlain ?? false
    }
}

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

// MARK: - Loading and checking

extension MessageTemplates {
    private static let textPragma = "{{% CONTENT_TYPE: TEXT}}\n"

    /// Reads `directory/<locale>/<kind>.mustache`; keys are `"<canonical locale>/<kind>"`.
    private static func loadOverrides(from directory: String) throws(TemplateError) -> [String: Compiled] {
        let files = FileManager.default
        var isFolder: ObjCBool = false
        guard files.fileExists(atPath: directory, isDirectory: &isFolder) else { return [:] }
        guard isFolder.boolValue else {
            throw TemplateError(file: directory, line: 0, column: 0, message: "not a folder")
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var result: [String: Compiled] = [:]
        var folderOf: [String: String] = [:]   // canonical locale → folder name, to catch de_AT next to de-AT
        for entry in try listing(directory) where !entry.hasPrefix(".") {
            let folder = base + entry
            var entryIsFolder: ObjCBool = false
            guard files.fileExists(atPath: folder, isDirectory: &entryIsFolder) else { continue }
            guard entryIsFolder.boolValue else {
                if entry.hasSuffix(".mustache") {
                    throw TemplateError(file: folder, line: 0, column: 0,
                                        message: "templates go in a locale folder, e.g. \(base)en/\(entry)")
                }
                continue
            }
            guard let locale = canonicalTag(entry) else {
                throw TemplateError(file: folder, line: 0, column: 0,
                                    message: "folder name is not a locale tag like en, de or de-AT")
            }
            if let other = folderOf[locale], other != entry {
                throw TemplateError(file: folder, line: 0, column: 0,
                                    message: "same locale as \(base)\(other); keep one of the two folders")
            }
            folderOf[locale] = entry
            for name in try listing(folder) where name.hasSuffix(".mustache") && !name.hasPrefix(".") {
                let path = folder + "/" + name
                guard let kind = Kind(rawValue: String(name.dropLast(".mustache".count))) else {
                    throw TemplateError(file: path, line: 0, column: 0,
                                        message: "unknown template; expected reminder.mustache, anniversary.mustache, ask.mustache or wish.mustache")
                }
                let text: String
                do {
                    text = try TextFile.read(path, limit: maxFileBytes)
                } catch {
                    throw TemplateError(file: path, line: error.line ?? 0, column: 0,
                                        message: error.line == nil ? "cannot read the file (\(error.reason))" : "the file \(error.reason)")
                }
                result["\(locale)/\(kind.rawValue)"] = try compile(text, kind: kind, file: path)
            }
        }
        return result
    }

    private static func listing(_ directory: String) throws(TemplateError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw TemplateError(file: directory, line: 0, column: 0, message: "cannot list the folder")
        }
    }

    /// Splits "title line, blank line, body", then checks and compiles both parts.
    private static func compile(_ raw: String, kind: Kind, file: String) throws(TemplateError) -> Compiled {
        var text = raw.replacingOccurrences(of: "\r\n", with: "\n")
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard let titleLine = lines.first, !titleLine.allSatisfy(\.isWhitespace) else {
            throw TemplateError(file: file, line: 1, column: 1,
                                message: "the first line must be the title (subject); it is empty")
        }
        guard lines.count == 3 else {
            throw TemplateError(file: file, line: 2, column: 1,
                                message: "the file ends after the title: expected a blank line, then the body")
        }
        guard lines[1].allSatisfy(\.isWhitespace) else {
            throw TemplateError(file: file, line: 2, column: 1, message:
                "expected a blank line after the title: a template is a title line, a blank line, then the body")
        }
        let body = String(lines[2])
        guard !body.allSatisfy(\.isWhitespace) else {
            throw TemplateError(file: file, line: 3, column: 1, message: "the body is empty")
        }
        let title = String(titleLine)
        let titleScan = try checkTags(title, firstLine: 1, kind: kind, file: file)
        let bodyScan = try checkTags(body, firstLine: 3, kind: kind, file: file)
        return Compiled(title: try ChunkedTemplate(title, scan: titleScan, firstLine: 1, file: file),
                        body: try ChunkedTemplate(body, scan: bodyScan, firstLine: 3, file: file),
                        file: file,
                        namesArePlain: titleScan.namesArePlain && bodyScan.namesArePlain)
    }

    /// Compiles as plain text (no HTML escaping); parser positions are mapped back to the file.
    /// `firstLine` and `firstColumn` are where `text` starts in the file.
    static func mustache(_ text: Substring, firstLine: Int, firstColumn: Int = 1,
                         file: String) throws(TemplateError) -> MustacheTemplate {
        do {
            return try MustacheTemplate(string: textPragma + text)
        } catch let error as MustacheTemplate.ParserError {
            // The pragma adds one line in front. The parser stops inside or after the bad
            // tag; point at its start, as the other checks do.
            let line = error.context.lineNumber - 1
            let column = tagStart(in: error.context.line, before: error.context.columnNumber)
            throw TemplateError(file: file, line: line + firstLine - 1,
                                column: line == 1 ? column + firstColumn - 1 : column,
                                message: describe(error.error))
        } catch {
            throw TemplateError(file: file, line: firstLine, column: 0, message: "\(error)")
        }
    }

    /// The column of the last `{{` that starts before `column` on `line`, else `column`.
    private static func tagStart(in line: String, before column: Int) -> Int {
        let chars = Array(line.prefix(max(column - 1, 0)))
        var index = chars.count - 2
        while index >= 0, !(chars[index] == "{" && chars[index + 1] == "{") { index -= 1 }
        guard index >= 0 else { return column }
        while index > 0, chars[index - 1] == "{" { index -= 1 }
        return index + 1
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? MustacheTemplate.Error else { return "unexpected end of template" }
        switch error {
        case .sectionCloseNameIncorrect: return "closing tag does not match the open section"
        case .unfinishedName: return "bad tag: a name is letters, digits, '_', '-' or '.', then }}"
        case .expectedSectionEnd: return "unclosed section"
        case .invalidSetDelimiter: return "bad set-delimiter tag"
        case .transformAppliedToInheritanceSection: return "a transform cannot apply to an inheritance section"
        case .illegalTokenInsideInheritSection: return "illegal tag inside an inheritance section"
        case .textInsideInheritSection: return "text inside an inheritance section"
        case .invalidConfigVariableSyntax: return "bad pragma: expected {{% NAME: VALUE}}"
        case .unrecognisedConfigVariable: return "unknown pragma: only CONTENT_TYPE: TEXT or HTML"
        @unknown default: return "\(error)"
        }
    }

    /// Finds what the Mustache parser reports badly or not at all: unclosed and mismatched
    /// sections (named, at their tag), unknown variables (typos render as nothing) and
    /// partials (there are none). Stops at a set-delimiter tag; the parser checks the rest.
    ///
    /// Also bounds what swift-mustache's recursive parser and renderer are given: sections
    /// nest at most `maxNesting` deep (about 3,000 overflowed the stack), and no set-delimiter
    /// tags (they would hide tags from this check). It walks the text once.
    ///
    /// Returns whether `name` and `first_name` occur only as plain variable tags, so
    /// rendered texts can be cached with holes for them (`ReminderTextCache`): no
    /// section on them, no `.` on them, no transform or `{{.}}` anywhere, and no hole
    /// character in the text; and where the text can be cut into separately compiled
    /// pieces (`ChunkedTemplate`).
    static func checkTags(_ text: String, firstLine: Int, kind: Kind, file: String,
                          chunkLength: Int = ChunkedTemplate.chunkLength) throws(TemplateError) -> TagScan {
        let chars = Array(text)
        var index = 0
        var line = firstLine
        var column = 1
        var open: [(name: String, line: Int, column: Int)] = []
        var namesArePlain = !ReminderTextCache.containsHole(text)
        var cuts = ChunkCuts(chunkLength: chunkLength)

        func error(_ line: Int, _ column: Int, _ message: String) -> TemplateError {
            TemplateError(file: file, line: line, column: column, message: message)
        }
        func checkVariable(_ rawName: String, _ line: Int, _ column: Int) throws(TemplateError) {
            // `uppercased(name)` → `name`; `first()` → ``; `a.b` → `a`.
            var name = Substring(rawName)
            while let paren = name.lastIndex(of: "("), let close = name[paren...].firstIndex(of: ")") {
                name = name[name.index(after: paren)..<close]
            }
            let root = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
            guard root.isEmpty || kind.variables.contains(root) else {
                throw error(line, column, "unknown variable \"\(root)\" (\(kind.rawValue) templates have: "
                            + kind.variables.sorted().joined(separator: ", ") + ")")
            }
        }

        while index < chars.count {
            guard chars[index] == "{", index + 1 < chars.count, chars[index + 1] == "{" else {
                cuts.text(at: index, cuttable: open.isEmpty, chars)
                if chars[index] == "\n" { line += 1; column = 1 } else { column += 1 }
                index += 1
                continue
            }
            let tagStart = index
            let tagLine = line, tagColumn = column
            let triple = index + 2 < chars.count && chars[index + 2] == "{"
            let start = index + (triple ? 3 : 2)
            let closer: [Character] = triple ? ["}", "}", "}"] : ["}", "}"]
            var end = start
            func closes(at position: Int) -> Bool {
                chars[position] == "}" && chars[position + 1] == "}" && (!triple || chars[position + 2] == "}")
            }
            while end + closer.count <= chars.count, !closes(at: end) { end += 1 }
            guard end + closer.count <= chars.count else {
                throw error(tagLine, tagColumn, "tag is never closed with \(String(closer))")
            }
            let content = Self.trimmed(chars[start..<end])
            for character in chars[index..<(end + closer.count)] {
                if character == "\n" { line += 1; column = 1 } else { column += 1 }
            }
            index = end + closer.count

            let sigil: Character? = triple ? "{" : content.first
            let name = triple || sigil.map({ "#^/!>=<$%&".contains($0) }) == true
                ? Self.trimmed(content.dropFirst(triple ? 0 : 1))
                : content
            let variable = !"#^/!>=<$%".contains(sigil ?? " ")
            cuts.tag(from: tagStart, to: index, cuttable: open.isEmpty, variable: variable, close: sigil == "/",
                     pragma: sigil == "%", chars)
            if sigil == "!" { continue }
            if name.contains("\n") { throw error(tagLine, tagColumn, "tag is never closed with \(String(closer))") }
            if sigil != "%" {
                let root = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let plainTag = !"#^/>=<$".contains(sigil ?? " ")  // a variable: bare, {{{…}}} or {{&…}}
                // Inside the contact's own lists (`{{#gift_ideas}}{{.}}{{^last()}}, {{/last()}}…`)
                // `.` and transforms are about the list, which such texts never cache.
                let inList = open.contains { $0.name == "gift_ideas" || $0.name == "notes" }
                if !inList && (name.contains("(") || name.first == ".")
                    || (root == "name" || root == "first_name") && (!plainTag || name.contains(".")) {
                    namesArePlain = false
                }
            }
            switch sigil {
            case "=": throw error(tagLine, tagColumn, "set-delimiter tags are not supported in message templates")
            case "%": continue
            case ">", "<": throw error(tagLine, tagColumn, "partials are not supported in message templates")
            case "#", "^", "$":
                if sigil != "$" { try checkVariable(name, tagLine, tagColumn) }
                guard open.count < Self.maxNesting else {
                    throw error(tagLine, tagColumn, "sections nested more than \(Self.maxNesting) deep")
                }
                open.append((name, tagLine, tagColumn))
            case "/":
                guard let section = open.popLast() else {
                    throw error(tagLine, tagColumn, "{{/\(name)}} closes no open section")
                }
                guard section.name == name else {
                    throw error(tagLine, tagColumn, "{{/\(name)}} does not close section \"\(section.name)\" "
                                + "(opened at \(section.line):\(section.column))")
                }
            default:
                guard !name.isEmpty else { throw error(tagLine, tagColumn, "empty tag") }
                try checkVariable(name, tagLine, tagColumn)
            }
        }
        if let section = open.last {
            throw error(section.line, section.column, "unclosed section \"\(section.name)\"")
        }
        return TagScan(namesArePlain: namesArePlain, cuts: cuts.cuts)
    }

    /// Without leading and trailing spaces (as Foundation's `.whitespaces`: spaces and tabs),
    /// cheaply: a template may hold 100,000 tags.
    private static func trimmed(_ characters: some BidirectionalCollection<Character>) -> String {
        func isSpace(_ character: Character) -> Bool { character.isWhitespace && !character.isNewline }
        guard let first = characters.firstIndex(where: { !isSpace($0) }),
              let last = characters.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(characters[first...last])
    }

    /// How deep sections may nest in a message template (the shipped ones use 2).
    static let maxNesting = 32

    /// The largest template file read: the body of a mail, with room to spare.
    static let maxFileBytes = 1 << 20

    /// What `checkTags` finds besides errors.
    struct TagScan {
        var namesArePlain: Bool
        /// Character offsets where the text may be cut into separately compiled pieces.
        var cuts: [Int]
    }
}

// MARK: - Compiling in pieces

extension MessageTemplates {
    /// Whether `text` compiled whole and compiled cut where `ChunkCuts` allows (with
    /// `chunkLength` 1: at every such place) render the same, for a few sets of values (and fail to compile alike). For tests and
    /// the `FuzzTemplates` target; cheap only on short texts.
    public static func piecesRenderAsWhole(_ text: String, kind: Kind, chunkLength: Int = 1) -> Bool {
        guard let scan = try? checkTags(text, firstLine: 1, kind: kind, file: "", chunkLength: chunkLength) else { return true }
        let whole = try? ChunkedTemplate(text, scan: TagScan(namesArePlain: false, cuts: []), firstLine: 1, file: "")
        let cut = try? ChunkedTemplate(text, scan: scan, firstLine: 1, file: "")
        guard let whole, let cut else { return (whole == nil) == (cut == nil) }
        let valueSets: [[String: Any]] = switch kind {
        case .reminder, .anniversary:
            [0, 1, 5].map { days in
                reminderValues(kind: kind, name: "Ann O'Brien", firstName: "Ann", daysUntil: days, age: days == 1 ? nil : 37,
                               date: "Monday, March 15", giftIdeas: days == 0 ? [] : ["a book", "tickets"],
                               notes: days == 5 ? ["likes tea"] : [])
            }
        case .ask:
            [["first_name": "Ann", "name": "Ann <O'Brien>", "sender_name": "Sam"], ["first_name": "", "name": ""]]
        case .wish:
            [["first_name": "Ann", "name": "Ann <O'Brien>", "age": 37, "has_age": true, "sender_name": "Sam"],
             ["first_name": "", "name": "", "has_age": false]]
        }
        return valueSets.allSatisfy { whole.render($0) == cut.render($0) }
    }
}

/// A template compiled as consecutive pieces, rendered one after the other.
///
/// swift-mustache 2.1.1's parser is quadratic: every tag and every `{` costs a count of
/// the characters left to the end of the text (`Parser.read(count:)` checks
/// `distance(from: position, to: endIndex)`), so a title of `{{name}}` 100,000 times took
/// minutes. Compiled in pieces of about `chunkLength` characters each, a template costs
/// time linear in its length. The pieces are cut only where that renders exactly what
/// the whole would (`ChunkCuts`): between top-level items, never inside a section, and
/// never where a piece's end or start would change which tags stand alone on their line.
/// What cannot be cut — a section — is bounded by `parseBudget`.
struct ChunkedTemplate: Sendable {
    /// Characters per piece, about: short enough that the parser's count stays cheap; a
    /// piece costs little more than its tags (measured, release: a title of 100,000 tags
    /// loads in 0.6 s and renders in 0.17 s; 256 was slower).
    static let chunkLength = 64

    let pieces: [MustacheTemplate]

    /// What the parser may spend on one template: the sum over its pieces of `{` count
    /// times length (characters), a bound on the characters it counts. A piece that cannot
    /// be cut — a section, or a line of tags that could each stand alone — costs the square
    /// of its tags; a template over this is an error, not a hang. A title of 100,000 tags
    /// in pieces costs about 15 million; the shipped templates less than 100,000.
    static let parseBudget = 256_000_000

    init(_ text: String, scan: MessageTemplates.TagScan, firstLine: Int, file: String) throws(TemplateError) {
        var pieces: [MustacheTemplate] = []
        var start = text.startIndex
        var offset = 0
        var line = firstLine
        var column = 1
        var spent = 0
        for cut in scan.cuts + [text.count] where cut > offset {
            let end = text.index(start, offsetBy: cut - offset)
            let piece = text[start..<end]
            spent += piece.reduce(0) { $1 == "{" ? $0 + 1 : $0 } * (cut - offset)
            guard spent <= Self.parseBudget else {
                throw TemplateError(file: file, line: line, column: column, message: "too many tags in one section "
                                    + "(or in a line of comments and sections) from here: keep sections short")
            }
            pieces.append(try MessageTemplates.mustache(piece, firstLine: line, firstColumn: column, file: file))
            for character in piece {
                if character == "\n" { line += 1; column = 1 } else { column += 1 }
            }
            start = end
            offset = cut
        }
        self.pieces = pieces
    }

    func render(_ values: Any) -> String {
        guard pieces.count > 1 else { return pieces.first?.render(values) ?? "" }
        var out = ""
        for piece in pieces { out += piece.render(values) }
        return out
    }
}

/// Chooses where a template may be cut into pieces that render, one after the other,
/// exactly what the whole renders. Fed every top-level character and tag in order.
///
/// The parser marks a section, comment or pragma tag "standalone" when it is alone on its
/// line (only spaces and tabs around it): then the line's indentation and line break are
/// not output. A piece starts as if at the start of a line and its end looks like the end
/// of a line, so a cut is allowed only:
/// - right after a line break (`\n`), unless a section's closing tag ends that line, or
/// - inside a line that already has something other than spaces and tabs before the cut,
///   where the item just before the cut is text, a variable, or a tag that was not first
///   on its line, and the item just after it is text other than a space or a tab, a
///   variable, or a tag followed by more on its line (none of these can stand alone),
///   and the cut does not separate a `{` from what follows it; not after a closing tag
///   on the same line until text or a variable follows it (the parser then resumes as
///   after the section's opening tag, which may have stood alone: at a line's start).
///
/// The differential check in `scripts/fuzz.sh templates` renders every template cut at
/// every allowed place against the uncut template.
struct ChunkCuts {
    let chunkLength: Int
    private(set) var cuts: [Int] = []
    private var lastCut = 0
    /// Something other than spaces and tabs since the last line break.
    private var lineHasContent = false
    /// Whether the item ending at the current position may end a piece.
    private var previousEndsPiece = true
    /// After a pragma tag (`{{% …}}`) the pieces would lose its setting: no more cuts.
    private var stopped = false
    /// The last thing other than spaces and tabs on this line closes a section; and so
    /// for the line that just ended. (A standalone `{{/x}}` takes its line break along,
    /// but the parser then carries on as if after `{{#x}}`: at the start of a line only
    /// when that tag stood alone too. A piece would always start at the start of a line.)
    private var lastIsClose = false
    private var previousLineEndedWithClose = false
    /// Since a closing tag on this line, no text or variable yet: the parser may be "at the
    /// start of a line" (as after its opening tag), where trailing spaces at a piece's end
    /// would be dropped and a tag ending a piece would stand alone.
    private var startOfLineAfterClose = false

    init(chunkLength: Int) {
        self.chunkLength = chunkLength
    }

    private static func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }

    /// A character of text at `index`; `cuttable` when at the top level (not in a section).
    mutating func text(at index: Int, cuttable: Bool, _ chars: [Character]) {
        let character = chars[index]
        if cuttable, index - lastCut >= chunkLength, !stopped, index > 0 {
            if chars[index - 1] == "\n" {
                if !previousLineEndedWithClose { cut(at: index) }
            } else if lineHasContent, previousEndsPiece, !startOfLineAfterClose, !Self.isBlank(character),
                      !character.isNewline, chars[index - 1] != "{" {
                cut(at: index)
            }
        }
        if character.isNewline {
            lineHasContent = false
            previousLineEndedWithClose = lastIsClose
            lastIsClose = false
            startOfLineAfterClose = false
        } else if !Self.isBlank(character) {
            lineHasContent = true
            lastIsClose = false
            startOfLineAfterClose = false
        }
        previousEndsPiece = true
    }

    /// A tag at `start..<end`; `cuttable` when at the top level (not in a section).
    mutating func tag(from start: Int, to end: Int, cuttable: Bool, variable: Bool, close: Bool, pragma: Bool,
                      _ chars: [Character]) {
        if pragma { stopped = true }
        if cuttable, !close, start - lastCut >= chunkLength, !stopped, start > 0 {
            let followed = end < chars.count && !Self.isBlank(chars[end]) && !chars[end].isNewline
            if chars[start - 1] == "\n" {
                if !previousLineEndedWithClose { cut(at: start) }
            } else if lineHasContent, previousEndsPiece, !startOfLineAfterClose, variable || followed {
                cut(at: start)
            }
        }
        previousEndsPiece = variable || lineHasContent
        lineHasContent = true
        lastIsClose = close
        if close { startOfLineAfterClose = true } else if variable { startOfLineAfterClose = false }
        // A tag spanning lines (a comment) ends on a line that has it as content.
    }

    private mutating func cut(at index: Int) {
        cuts.append(index)
        lastCut = index
    }
}
