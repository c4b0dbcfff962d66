import Foundation
// Linked explicitly: with --static-swift-stdlib, DateFormatter finds no locale data without it (docs/design/decisions.md).
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

/// The message templates (docs/design/asks-and-wishes.md): the shipped ones plus the user's overrides,
/// all compiled and checked when loaded, so a broken one stops the program before
/// anything is sent.
///
/// A template file is a title (subject) line, one blank line, then the body.
/// Rendering is plain text: values are never HTML-escaped.
public struct MessageTemplates: Sendable {
    /// Which message a template is for: a reminder of an occasion kind (the
    /// kind's `template`: `reminder` for birthdays, `anniversary`, `memorial`, …),
    /// an ask, a wish, a notice or a digest.
    ///
    /// Reminder variables: `name`, `first_name`, `days_until`, `date` (localized
    /// weekday, day and month), the booleans `today`, `tomorrow`, `later` (2 days or
    /// more); the years since the date as the kind's `yearsVariable` (`age` and
    /// `has_age` for birthdays, `years` and `has_years` for the others; absent when
    /// the year is unknown); `label` for a labelled date; `gift_ideas` and `notes`
    /// (lists of text) with `has_gift_ideas` and `has_notes`; and for a reminder
    /// that came by a fallback, `fallback_for`, `has_fallback` and `problem`.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        /// Only the names of known templates.
        public init?(rawValue: String) {
            guard Self.known.contains(rawValue) else { return nil }
            self.rawValue = rawValue
        }

        private init(known: String) { rawValue = known }

        /// A birthday reminder to the user.
        public static let reminder = Kind(known: OccasionKind.birthday.template)
        /// An anniversary reminder to the user.
        public static let anniversary = Kind(known: OccasionKind.anniversary.template)
        /// To a contact, asking for their birthday. Variables: `first_name`, `name`,
        /// `sender_name` (absent when not configured).
        public static let ask = Kind(known: "ask")
        /// To a contact on their birthday. Variables: `first_name`, `name`, `age` and
        /// `has_age` (absent when the year is unknown), `sender_name`.
        public static let wish = Kind(known: "wish")
        /// To the user: reminders that reached nobody. Variables: `count`, `one`
        /// (count is 1), and `problems`, a list of `name`, `occasion` (the kind's
        /// name) with a boolean per kind (`birthday`, `anniversary`, …), `label`,
        /// `date` (localized), `reason`, `hint` (a command) and `wish` (the hint
        /// sends a wish: the birthday has come).
        public static let notice = Kind(known: "notice")
        /// To the user: what is coming (`[digests.NAME]`). Variables: `entries`, a list of
        /// `{name, occasion, label, date, days_until, age, gift_ideas}` (each also with a
        /// boolean per kind, `today`, `tomorrow`, `has_age`, `has_label`,
        /// `has_gift_ideas`); `problems`, a list of `{name, occasion, date, reason, hint}`
        /// (with the kind booleans and `has_hint`): reminders no channel delivered since
        /// the previous digest; `missing_count`, contacts without a birthday; `days`, how many
        /// days it covers; and `count` (entries), `one` (exactly one entry), `only_birthdays`,
        /// `week` (`days` is 7), `has_entries`, `has_problems`, `problem_count`, `has_missing`.
        public static let digest = Kind(known: "digest")

        /// The reminders of `kind`.
        public static func reminder(of kind: OccasionKind) -> Kind { Kind(known: kind.template) }

        /// Every template name: each occasion kind's, then the others.
        public static let allCases: [Kind] = OccasionKind.all.map { Kind(known: $0.template) }
            + [.ask, .wish, .notice, .digest]
        private static let known = Set(OccasionKind.all.map(\.template) + ["ask", "wish", "notice", "digest"])

        /// The occasion kind whose reminders this template renders; nil for the others.
        public var occasionKind: OccasionKind? { OccasionKind.all.first { $0.template == rawValue } }

        public var description: String { rawValue }

        /// The names, as an error message lists them.
        static var namesList: String {
            let names = allCases.map { "\($0.rawValue).mustache" }
            return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
        }

        /// A boolean per occasion kind, as notices and digests have them.
        static var kindBooleans: [String] { OccasionKind.all.map(\.templateFlag) }

        /// The variables a template of this kind may use; anything else is a typo.
        var variables: Set<String> {
            if let kind = occasionKind {
                var names: Set<String> = ["name", "first_name", "days_until", "date", "today", "tomorrow", "later",
                                          "gift_ideas", "has_gift_ideas", "notes", "has_notes", "fallback_for",
                                          "has_fallback", "problem"]
                if kind.hasYears { names.formUnion([kind.yearsVariable, "has_" + kind.yearsVariable]) }
                if kind.isLabelled { names.formUnion(["label", "has_label"]) }
                return names.union(MessageTemplates.theirDayVariables)
            }
            switch rawValue {
            case "notice": return Set(["count", "one", "problems", "name", "occasion", "label", "has_label", "date", "reason",
                                       "hint", "has_hint", "wish"] + Self.kindBooleans)
            case "ask": return ["first_name", "name", "sender_name"]
            case "wish": return ["first_name", "name", "age", "has_age", "sender_name"]
            default: return Set(["entries", "problems", "missing_count", "days", "count", "one", "only_birthdays", "week",
                                 "has_entries", "has_problems", "problem_count", "has_missing",
                                 "name", "occasion", "label", "date", "days_until", "age", "years", "gift_ideas",
                                 "today", "tomorrow", "has_age", "has_years", "has_label", "has_gift_ideas",
                                 "reason", "hint", "has_hint", "wish"] + Self.kindBooleans)
            }
        }
    }

    /// A reminder's variables about the contact's own day, all absent unless their
    /// time zone is known and differs from the user's: `their_time` (their clock at
    /// the reminder's time, "15:00"), `their_day_starts` (when their occasion day
    /// begins in the user's time), `their_day_starts_day_before` (it begins on the
    /// day before, in the user's time), and `has_their_time`.
    static let theirDayVariables: Set<String> = ["their_time", "has_their_time", "their_day_starts",
                                                  "their_day_starts_day_before"]

    struct Compiled: Sendable {
        let title: ChunkedTemplate
        let body: ChunkedTemplate
        let file: String
        /// `name` and `first_name` appear only as plain `{{name}}` tags (no sections,
        /// transforms or dotted names, no set-delimiter tags): the text around them
        /// does not depend on them, so it can be rendered once and reused.
        let namesArePlain: Bool
    }

    /// By `"<canonical locale>/<kind>"`, e.g. `"de-AT/reminder"`.
    private let templates: TemplateTable

    /// Reminder texts rendered once per (locale, days, age, date), with the names left as holes.
    private let reminderTexts = ReminderTextCache()

    /// The locale every lookup ends with; it must exist for every kind.
    static let lastResort = "en"

    /// Shipped templates, overridden by `overrides`: one list per override
    /// folder, as `TemplateFolders.read` (BuzzFiles) gives them; a folder
    /// earlier in the list wins over a later one. Every template is compiled
    /// and checked here; nothing is read from disk.
    public init(overrides: [[TemplateOverride]] = [], shipped: [String: String] = ShippedTemplates.all) throws(TemplateError) {
        var overridden: [String: Compiled] = [:]
        for folder in overrides.reversed() {
            for (key, compiled) in try Self.compileOverrides(folder) {
                overridden[key] = compiled
            }
        }
        // The templates built into the binary are compiled when first used, once
        // per process (`ShippedTable.builtIn`): a `tick` renders one or two of the
        // ~60, and compiling them all was most of what it cost before it sent
        // (an empty tick: 43 ms of CPU against `list`'s 9 ms). A test compiles
        // every one (`MessageTemplatesTests.everyShippedTemplateCompiles`).
        // Other shipped texts (tests) are compiled and checked here, as overrides are.
        let table = shipped == ShippedTemplates.all ? ShippedTable.builtIn
            : ShippedTable(shipped: shipped, compiled: try Self.compileShipped(shipped))
        let templates = TemplateTable(shipped: table, overrides: overridden)
        for kind in Kind.allCases where !templates.contains("\(Self.lastResort)/\(kind.rawValue)") {
            throw TemplateError(file: "templates/\(Self.lastResort)/\(kind.rawValue).mustache", line: 0, column: 0,
                                message: "missing: every kind needs an English template to fall back to")
        }
        self.templates = templates
    }

    /// Every shipped template compiled and checked: what a test asks to make sure
    /// the lazily compiled ones all compile.
    static func checkShipped() throws(TemplateError) {
        _ = try compileShipped(ShippedTemplates.all)
    }

    /// The shipped templates by canonical key, each compiled once, on first use
    /// (or ahead, when the caller has compiled them to check them).
    final class ShippedTable: Sendable {
        /// Canonical key → (the shipped key, its text).
        private let sources: [String: (key: String, text: String)]
        private let compiled: Mutex<[String: Compiled]>

        init(shipped: [String: String], compiled: [String: Compiled] = [:]) {
            var sources: [String: (key: String, text: String)] = [:]
            for (key, text) in shipped {
                let parts = key.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2, let locale = MessageTemplates.canonicalTag(String(parts[0])),
                      let kind = Kind(rawValue: String(parts[1])) else { continue }
                sources["\(locale)/\(kind.rawValue)"] = (key, text)
            }
            self.sources = sources
            self.compiled = Mutex(compiled)
        }

        /// The templates built into the binary, for every `MessageTemplates` of the process.
        static let builtIn = ShippedTable(shipped: ShippedTemplates.all)

        var keys: Dictionary<String, (key: String, text: String)>.Keys { sources.keys }

        func contains(_ key: String) -> Bool { sources[key] != nil }

        /// The compiled template; nil when there is none for `key` (or, impossible
        /// for the built-in ones, which the test suite compiles, when it does not compile).
        subscript(key: String) -> Compiled? {
            if let done = compiled.withLock({ $0[key] }) { return done }
            guard let source = sources[key], let kind = Kind(rawValue: String(key.split(separator: "/")[1])),
                  let made = try? MessageTemplates.compile(source.text, kind: kind, file: "templates/\(source.key).mustache")
            else { return nil }
            compiled.withLock { $0[key] = made }
            return made
        }
    }

    /// The overrides (compiled and checked when loaded) over the shipped templates.
    struct TemplateTable: Sendable {
        let shipped: ShippedTable
        let overrides: [String: Compiled]

        func contains(_ key: String) -> Bool { overrides[key] != nil || shipped.contains(key) }
        subscript(key: String) -> Compiled? { overrides[key] ?? shipped[key] }
        var keys: Set<String> { Set(overrides.keys).union(shipped.keys) }
    }

    /// `shipped` compiled and checked, by `<locale>/<kind>`.
    private static func compileShipped(_ shipped: [String: String]) throws(TemplateError) -> [String: Compiled] {
        var templates: [String: Compiled] = [:]
        for (key, text) in shipped.sorted(by: { $0.key < $1.key }) {
            let file = "templates/\(key).mustache"
            let parts = key.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let locale = Self.canonicalTag(String(parts[0])),
                  let kind = Kind(rawValue: String(parts[1])) else {
                throw TemplateError(file: file, line: 0, column: 0,
                                    message: "not a <locale>/<kind> template name (kinds: \(Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            templates["\(locale)/\(kind.rawValue)"] = try compile(text, kind: kind, file: file)
        }
        return templates
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
        for tag in Self.lookupChain(preferred) where templates.contains("\(tag)/\(kind.rawValue)") {
            return tag
        }
        return Self.lastResort
    }

    /// Renders a reminder to the user in `locale` (`general.locale`), falling back to its
    /// language, then English. `age` is the age reached on that birthday (for an
    /// anniversary, the years), when known; `giftIdeas` and `notes` are the contact's.
    public func renderReminder(name: String, firstName: String, daysUntil: Int, age: Int?,
                               date: LocalDate, locale: String, occasion: Occasion = .birthday,
                               giftIdeas: [String] = [], notes: [String] = [],
                               routing: RoutingNote? = nil, theirDay: TheirDay? = nil) -> (title: String, body: String, locale: String) {
        let kind = Kind.reminder(of: occasion.kind)
        let first = Self.nonBlank(firstName) ?? name
        let shownName = Self.nonBlank(name) ?? first
        guard giftIdeas.isEmpty, notes.isEmpty, routing == nil, theirDay == nil else {
            // Texts with the contact's own lists, a fallback's reason, or their own
            // time zone are not shared with anyone: no cache.
            let used = resolvedLocale(kind: kind, preferred: [locale])
            var values = Self.reminderValues(kind: kind, name: shownName, firstName: first, daysUntil: daysUntil, age: age,
                                             date: Self.format(date, locale: Self.dateLocale(requested: locale, used: used)),
                                             label: occasion.label, giftIdeas: giftIdeas, notes: notes)
            if let routing {
                values["fallback_for"] = routing.fallbackFor
                values["has_fallback"] = true
                values["problem"] = routing.problem
            }
            if let theirDay {
                values["has_their_time"] = true
                values["their_time"] = theirDay.theirTime
                values["their_day_starts"] = theirDay.dayStarts
                values["their_day_starts_day_before"] = theirDay.dayStartsTheDayBefore
            }
            return render(kind, locale: used, values: values, fallbackTitle: name)
        }
        // A batch of reminders differs mostly in the names: the rest of the text
        // comes from a cache, rendered once with holes where the names go.
        let key = ReminderTextCache.Key(locale: locale, daysUntil: daysUntil, age: age, date: date, kind: kind,
                                        label: occasion.label)
        if let text = reminderTexts.entries.withLock({ $0[key] }) {
            return Self.finish(text, name: shownName, firstName: first, fallbackTitle: name)
        }
        let used = resolvedLocale(kind: kind, preferred: [locale])
        let dateText = Self.format(date, locale: Self.dateLocale(requested: locale, used: used))
        guard let compiled = templates["\(used)/\(kind.rawValue)"], compiled.namesArePlain,
              !ReminderTextCache.containsHole(dateText) else {
            let values = Self.reminderValues(kind: kind, name: shownName, firstName: first, daysUntil: daysUntil, age: age,
                                             date: dateText, label: occasion.label)
            return render(kind, locale: used, values: values, fallbackTitle: name)
        }
        let holes = Self.reminderValues(kind: kind, name: ReminderTextCache.nameHole, firstName: ReminderTextCache.firstNameHole,
                                        daysUntil: daysUntil, age: age, date: dateText, label: occasion.label)
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
                                       date: String, label: String? = nil, giftIdeas: [String] = [],
                                       notes: [String] = []) -> [String: Any] {
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
            "fallback_for": [String](),
            "has_fallback": false,
        ]
        if let label {
            values["label"] = label
            values["has_label"] = true
        } else if kind.occasionKind?.isLabelled == true {
            values["has_label"] = false
        }
        let years = kind.occasionKind?.yearsVariable ?? "age"
        values["has_" + years] = age != nil
        if let age { values[years] = age }
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

    /// Renders a notice to the user in `locale` (`general.locale`): the reminders
    /// that reached nobody, each with what to do now.
    public func renderNotice(_ entries: [NoticeEntry], locale: String) -> (title: String, body: String, locale: String) {
        let used = resolvedLocale(kind: .notice, preferred: [locale])
        let dateLocale = Self.dateLocale(requested: locale, used: used)
        let values: [String: Any] = [
            "count": entries.count,
            "one": entries.count == 1,
            "problems": entries.map { Self.problemValues($0, dateLocale: dateLocale) },
        ]
        return render(.notice, locale: used, values: values, fallbackTitle: "BirthdayBuzz")
    }

    /// One reminder that reached nobody, as notices and digests list it.
    static func problemValues(_ entry: NoticeEntry, dateLocale: String) -> [String: Any] {
        var values: [String: Any] = [
            "name": entry.name,
            "occasion": entry.occasion.rawValue,
            "date": Self.format(entry.date, locale: dateLocale),
            "reason": entry.reason,
            "hint": entry.hint,
            "has_hint": true,
            "wish": entry.hint.hasPrefix("buzz wish "),
            "has_label": entry.occasion.label != nil,
        ]
        if let label = entry.occasion.label { values["label"] = label }
        for kind in OccasionKind.all { values[kind.templateFlag] = entry.occasion.kind == kind }
        return values
    }

    /// Renders a digest to the user in `locale` (`general.locale`), falling back to its
    /// language, then English; dates are written in the language of the template used.
    public func renderDigest(_ content: DigestContent, locale: String) -> (title: String, body: String, locale: String) {
        let used = resolvedLocale(kind: .digest, preferred: [locale])
        let dateLocale = Self.dateLocale(requested: locale, used: used)
        // Built key by key: one literal of mixed types is too much for the type checker.
        var entries: [[String: Any]] = []
        for entry in content.entries {
            var values: [String: Any] = [:]
            values["name"] = entry.name
            values["occasion"] = entry.occasion.rawValue
            values["date"] = Self.format(entry.date, locale: dateLocale)
            values["days_until"] = entry.daysUntil
            values["gift_ideas"] = entry.giftIdeas
            values["has_gift_ideas"] = !entry.giftIdeas.isEmpty
            for kind in OccasionKind.all { values[kind.templateFlag] = entry.occasion.kind == kind }
            values["today"] = entry.daysUntil == 0
            values["tomorrow"] = entry.daysUntil == 1
            values["has_age"] = entry.age != nil
            values["has_years"] = entry.age != nil
            if let age = entry.age { values["years"] = age }
            values["has_label"] = entry.label != nil
            if let age = entry.age { values["age"] = age }
            if let label = entry.label { values["label"] = label }
            entries.append(values)
        }
        let problems = content.problems.map { Self.problemValues($0, dateLocale: dateLocale) }
        var values: [String: Any] = [:]
        values["entries"] = entries
        values["problems"] = problems
        values["missing_count"] = content.missingCount
        values["days"] = content.days
        values["count"] = entries.count
        values["one"] = entries.count == 1
        values["only_birthdays"] = content.entries.allSatisfy { $0.occasion == Occasion.birthday }
        values["week"] = content.days == 7
        values["has_entries"] = !entries.isEmpty
        values["has_problems"] = !problems.isEmpty
        values["problem_count"] = problems.count
        values["has_missing"] = content.missingCount > 0
        return render(.digest, locale: used, values: values, fallbackTitle: "BirthdayBuzz: " + content.name)
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

    /// A rendered title on one line (CR/LF become spaces: OneLine.collapsed, which
    /// also trims — and is cheap), else `fallbackTitle`; the body without trailing space.
    private static func cleaned(title: String, body: String, locale: String,
                                fallbackTitle: String) -> (title: String, body: String, locale: String) {
        let title = OneLine.collapsed(title)
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
        var label: String?
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
