import Foundation
import BuzzTestKit
import Testing
@testable import BirthdayBuzz
import BuzzFiles

@Suite struct MessageTemplatesTests {
    static let shippedLocales = ["de", "en", "es", "fr"]

    /// The built-in templates are compiled when first used (`ShippedTable.builtIn`):
    /// each must compile and pass the checks an override passes, and every one is
    /// found and rendered through the lazy table as through an eager one.
    @Test func everyShippedTemplateCompiles() throws {
        try MessageTemplates.checkShipped()
        let lazy = try MessageTemplates()
        // Shipped texts other than the built-in ones are compiled ahead, as before.
        var texts = ShippedTemplates.all
        texts["en-GB/ask"] = texts["en/ask"]
        let eager = try MessageTemplates(shipped: texts)
        #expect(eager.locales(for: .ask).contains("en-GB"))
        for kind in MessageTemplates.Kind.allCases {
            #expect(lazy.locales(for: kind) == eager.locales(for: kind).filter { $0 != "en-GB" }, "\(kind)")
            #expect(!lazy.locales(for: kind).isEmpty, "\(kind)")
            for locale in lazy.locales(for: kind) {
                #expect(lazy.source(kind: kind, locale: locale) == eager.source(kind: kind, locale: locale))
                #expect(lazy.source(kind: kind, locale: locale) == "templates/\(locale)/\(kind.rawValue).mustache")
            }
        }
    }

    /// Monday, 15 March 2027.
    static func monday() throws -> LocalDate {
        try #require(LocalDate(year: 2027, month: 3, day: 15))
    }

    /// A fresh folder, removed after `body`.
    static func withTempFolder(_ files: [String: String], _ body: (String) throws -> Void) throws {
        let root = TestFolders.temporary
            .appendingPathComponent("buzz-templates-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try body(root)
    }

    static func loadError(_ files: [String: String]) throws -> (root: String, error: TemplateError?) {
        var result: (String, TemplateError?) = ("", nil)
        try withTempFolder(files) { root in
            do throws(TemplateError) {
                _ = try MessageTemplates(overrideDirectory: root)
                result = (root, nil)
            } catch {
                result = (root, error)
            }
        }
        return result
    }

    static func shippedError(_ extra: [String: String]) -> TemplateError? {
        var shipped = ShippedTemplates.all
        shipped.merge(extra) { _, new in new }
        do {
            _ = try MessageTemplates(overrideDirectory: nil, shipped: shipped)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Shipped templates

    @Test func everyShippedReminderRendersForEveryCase() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        #expect(templates.locales(for: .reminder) == Self.shippedLocales)
        #expect(templates.locales(for: .anniversary) == Self.shippedLocales)
        let date = try Self.monday()
        for occasion in OccasionKind.all.map({ Occasion($0) }) {
          for locale in Self.shippedLocales {
            for days in [0, 1, 5] {
                for age in [nil, 37] as [Int?] {
                    let out = templates.renderReminder(name: "Anna Smith", firstName: "Anna", daysUntil: days,
                                                       age: age, date: date, locale: locale, occasion: occasion)
                    let label = "\(occasion) \(locale) days=\(days) age=\(age.map(String.init) ?? "nil")"
                    #expect(out.locale == locale, "\(label)")
                    #expect(!out.title.isEmpty, "\(label)")
                    #expect(!out.title.contains("\n"), "\(label): \(out.title)")
                    #expect(out.title.contains("Anna Smith"), "\(label): \(out.title)")
                    #expect(!out.title.contains("{{") && !out.body.contains("{{"), "\(label)")
                    #expect(out.body.contains("Anna"), "\(label): \(out.body)")
                    #expect(out.body.contains("15"), "\(label): the date is missing: \(out.body)")
                    #expect(out.body.contains("37") == (age != nil && occasion.kind.hasYears), "\(label): \(out.body)")
                    #expect(out.title.contains("5") == (days == 5), "\(label): \(out.title)")
                    // Birthdays and anniversaries: one line of news and one of advice; the others give no advice.
                    let lines = occasion.kind == .birthday || occasion.kind == .anniversary ? 2 : 1
                    #expect(out.body.split(separator: "\n").count == lines, "\(label): \(out.body)")
                    #expect(out.body.last != "\n" && out.body.first != "\n", "\(label)")
                }
            }
          }
        }
    }

    @Test func everyShippedAskRendersWithAndWithoutSender() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        #expect(templates.locales(for: .ask) == Self.shippedLocales)
        #expect(templates.locales(for: .wish) == Self.shippedLocales)
        for locale in Self.shippedLocales {
            for sender in [nil, "", "Ben"] as [String?] {
                let out = templates.renderAsk(firstName: "Anna", name: "Anna Smith", senderName: sender,
                                              locales: [locale])
                #expect(out.locale == locale)
                #expect(!out.title.isEmpty && !out.title.contains("\n"))
                #expect(out.body.contains("Anna"))
                #expect(!out.body.contains("{{"))
                #expect(!out.body.hasSuffix("\n"))
                if sender == "Ben" {
                    #expect(out.body.hasSuffix("!\nBen"), "\(locale): \(out.body)")
                } else {
                    #expect(out.body.hasSuffix("!"), "\(locale): \(out.body)")
                }
            }
        }
    }

    @Test func englishTexts() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let date = try Self.monday()
        let today = templates.renderReminder(name: "Anna Smith", firstName: "Anna", daysUntil: 0, age: 37,
                                             date: date, locale: "en")
        #expect(today.title == "It's Anna Smith's birthday today")
        #expect(today.body == "Anna turns 37 today, Monday, March 15.\nA quick call or a few kind words will make their day.")
        let tomorrow = templates.renderReminder(name: "Anna Smith", firstName: "Anna", daysUntil: 1, age: nil,
                                                date: date, locale: "en-US")
        #expect(tomorrow.title == "Anna Smith's birthday is tomorrow")
        #expect(tomorrow.body.hasPrefix("Anna's birthday is tomorrow, Monday, March 15.\n"))
        let later = templates.renderReminder(name: "Anna Smith", firstName: "Anna", daysUntil: 5, age: 37,
                                             date: date, locale: "en")
        #expect(later.title == "Anna Smith's birthday is in 5 days")
        #expect(later.body.hasPrefix("Anna turns 37 on Monday, March 15, in 5 days.\n"))

        let ask = templates.renderAsk(firstName: "Anna", name: "Anna Smith", senderName: "Ben", locales: ["en"])
        #expect(ask.title == "Quick question")
        #expect(ask.body == """
            Hey Anna, I'm updating my contacts for close friends and family. \
            What's your birthday (day and month; the year if you like)?

            Thanks!
            Ben
            """)
    }

    // MARK: Locale fallback

    @Test func germanRegionFallsBackToGermanAndKeepsTheRegionForTheDate() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let date = try Self.monday()
        for tag in ["de-AT", "de_AT.UTF-8", "DE-at", "de"] {
            #expect(templates.resolvedLocale(kind: .reminder, preferred: [tag]) == "de", "\(tag)")
        }
        let out = templates.renderReminder(name: "Anna Huber", firstName: "Anna", daysUntil: 0, age: 37,
                                           date: date, locale: "de-AT")
        #expect(out.locale == "de")
        #expect(out.title == "Anna Huber hat heute Geburtstag")
        #expect(out.body.hasPrefix("Heute, am Montag, 15. März, wird Anna 37.\n"))
        let later = templates.renderReminder(name: "Anna Huber", firstName: "Anna", daysUntil: 5, age: nil,
                                             date: date, locale: "de")
        #expect(later.title == "Anna Huber hat in 5 Tagen Geburtstag")
        #expect(later.body.hasPrefix("In 5 Tagen, am Montag, 15. März, hat Anna Geburtstag.\n"))
        // Austrian month names come from the requested locale.
        let january = try #require(LocalDate(year: 2027, month: 1, day: 4))
        let austrian = templates.renderReminder(name: "Anna", firstName: "Anna", daysUntil: 1, age: nil,
                                                date: january, locale: "de-AT")
        #expect(austrian.body.contains("Jänner"), "\(austrian.body)")
    }

    @Test func unknownLocaleFallsBackToEnglish() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let date = try Self.monday()
        for tag in ["xx", "xx-YY", "", "C", "POSIX", "pt-BR"] {
            #expect(templates.resolvedLocale(kind: .reminder, preferred: [tag]) == "en", "\(tag)")
        }
        let out = templates.renderReminder(name: "Anna", firstName: "Anna", daysUntil: 0, age: nil,
                                           date: date, locale: "xx")
        #expect(out.locale == "en")
        #expect(out.title == "It's Anna's birthday today")
        #expect(out.body.contains("Monday, March 15"), "the date follows the template's language: \(out.body)")
    }

    @Test func askLocaleChain() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        #expect(templates.resolvedLocale(kind: .ask, preferred: ["de-AT", "fr"]) == "de")
        #expect(templates.resolvedLocale(kind: .ask, preferred: ["pt", "fr"]) == "fr")
        #expect(templates.resolvedLocale(kind: .ask, preferred: ["pt", "fr-CA"]) == "fr")
        #expect(templates.resolvedLocale(kind: .ask, preferred: ["pt-BR", "it"]) == "en")
        #expect(templates.resolvedLocale(kind: .ask, preferred: []) == "en")
        let out = templates.renderAsk(firstName: "Ana", name: "Ana Silva", senderName: nil, locales: ["pt", "fr"])
        #expect(out.locale == "fr")
        #expect(out.title == "Petite question")
        #expect(out.body.hasPrefix("Salut Ana !"))
        let german = templates.renderAsk(firstName: "Jonas", name: "Jonas Berger", senderName: "Lea",
                                         locales: ["de-AT", "en"])
        #expect(german.locale == "de")
        #expect(german.title == "Kurze Frage")
        #expect(german.body.hasPrefix("Hallo Jonas, "))
        #expect(german.body.hasSuffix("Danke dir!\nLea"))
    }

    @Test func lookupChainAndTags() {
        #expect(MessageTemplates.canonicalTag("de_at.UTF-8") == "de-AT")
        #expect(MessageTemplates.canonicalTag("zh_hant_tw") == "zh-Hant-TW")
        #expect(MessageTemplates.canonicalTag("es-419") == "es-419")
        #expect(MessageTemplates.canonicalTag("ca_ES@valencia") == "ca-ES")
        #expect(MessageTemplates.canonicalTag("C") == nil)
        #expect(MessageTemplates.canonicalTag("de/../x") == nil)
        #expect(MessageTemplates.lookupChain(["de-AT", "fr-CA"]) == ["de-AT", "de", "fr-CA", "fr", "en"])
        #expect(MessageTemplates.lookupChain(["zh-Hant-TW", "en-GB"]) == ["zh-Hant-TW", "zh-Hant", "zh", "en-GB", "en"])
    }

    // MARK: Cached texts

    /// Names that would show a wrong hole, escape or trim if the cache got them wrong.
    static let trickyNames: [(String, String)] = [
        ("Anna Smith", "Anna"), ("O'Brien \"Bob\"", ""), ("  ", "Zoë"), ("Line\nBreak", "Line"),
        ("{{name}}", "{{first_name}}"), ("Émile\u{E000}", "\u{E001}"), ("Trailing  ", "  "), ("", ""),
    ]

    @Test func cachedTextsMatchAFullRender() throws {
        let overrides = [
            "en/reminder.mustache": "{{#today}}{{{name}}} today{{/today}}{{^today}}{{& first_name}} later{{/today}}\n\n{{name}}, {{date}}, {{age}} {{! name }}\n",
            "de/reminder.mustache": "{{#name}}Hallo {{.}}{{/name}}\n\n{{first_name}} am {{date}}\n",
            "fr/reminder.mustache": "{{uppercased(name)}}\n\n{{first_name}}\n",
        ]
        try Self.withTempFolder(overrides) { root in
            for folder in [nil, root] {
                let templates = try MessageTemplates(overrideDirectory: folder)
                let date = try Self.monday()
                for locale in Self.shippedLocales + ["de-AT", "xx"] {
                    for days in [0, 1, 5] {
                        for age in [nil, 37] as [Int?] {
                            for (name, first) in Self.trickyNames {
                                let cached = templates.renderReminder(name: name, firstName: first, daysUntil: days, age: age,
                                                                      date: date, locale: locale)
                                let full = templates.renderReminderUncached(name: name, firstName: first, daysUntil: days,
                                                                            age: age, date: date, locale: locale)
                                #expect(cached == full, "\(locale) \(days) \(String(describing: age)) \(name)")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func onlyPlainNameTagsAreCached() {
        for text in ["{{name}} {{first_name}}", "{{{name}}} {{& first_name}}", "{{#today}}{{ name }}{{/today}}",
                     "{{! name }}{{^has_age}}{{first_name}}{{/has_age}}", "{{date}} {{age}}"] {
            #expect(ReminderTextCache.namesArePlain(in: text), "\(text)")
        }
        for text in ["{{#name}}x{{/name}}", "{{^first_name}}x{{/first_name}}", "{{uppercased(name)}}", "{{name.count}}",
                     "{{.}}", "{{=<% %>=}}<%name%>", "{{name}}\u{E000}", "{{lowercased(date)}}", "{{name"] {
            #expect(!ReminderTextCache.namesArePlain(in: text), "\(text)")
        }
    }

    // MARK: Plain text

    @Test func valuesStayLiteral() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let date = try Self.monday()
        for locale in Self.shippedLocales {
            let reminder = templates.renderReminder(name: "Anna & Ben <3", firstName: "Seán O'Brien", daysUntil: 1,
                                                    age: 40, date: date, locale: locale)
            #expect(reminder.title.contains("Anna & Ben <3"), "\(reminder.title)")
            #expect(reminder.body.contains("Seán O'Brien"), "\(reminder.body)")
            #expect(!reminder.body.contains("&#") && !reminder.body.contains("&amp;"))
            let ask = templates.renderAsk(firstName: "O'Brien", name: "Liam O'Brien", senderName: "Anna & Ben <3",
                                          locales: [locale])
            #expect(ask.body.contains("O'Brien"))
            #expect(ask.body.hasSuffix("\nAnna & Ben <3"), "\(ask.body)")
        }
    }

    @Test func titleIsOneLineAndBlankValuesFallBack() throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let date = try Self.monday()
        let out = templates.renderReminder(name: "Anna\nSmith", firstName: " ", daysUntil: 0, age: nil,
                                           date: date, locale: "en")
        #expect(out.title == "It's Anna Smith's birthday today")
        #expect(out.body.contains("Anna\nSmith's birthday"), "an empty first name falls back to the name")
        let ask = templates.renderAsk(firstName: "", name: "Anna Smith", senderName: "  ", locales: ["en"])
        #expect(ask.body.hasPrefix("Hey Anna Smith, "))
        #expect(ask.body.hasSuffix("Thanks!"))
    }

    // MARK: Overrides

    @Test func overrideWinsOverShipped() throws {
        let date = try Self.monday()
        try Self.withTempFolder([
            "de/reminder.mustache": "Geburtstag: {{name}}\n\nHallo {{first_name}}, noch {{days_until}} Tage.\n",
            "de_AT/ask.mustache": "Servus\n\nServus {{first_name}}!\n",
            "it/ask.mustache": "Domanda\r\n\r\nCiao {{first_name}}!\r\n",
            "README.txt": "notes are ignored",
        ]) { root in
            let templates = try MessageTemplates(overrideDirectory: root)
            let out = templates.renderReminder(name: "Anna Huber", firstName: "Anna", daysUntil: 5, age: nil,
                                               date: date, locale: "de-AT")
            #expect(out.locale == "de")
            #expect(out.title == "Geburtstag: Anna Huber")
            #expect(out.body == "Hallo Anna, noch 5 Tage.")
            #expect(templates.source(kind: .reminder, locale: "de") == root + "/de/reminder.mustache")
            #expect(templates.source(kind: .reminder, locale: "en") == "templates/en/reminder.mustache")
            // Shipped templates of other locales and kinds stay.
            #expect(templates.renderReminder(name: "Anna", firstName: "Anna", daysUntil: 0, age: nil, date: date,
                                             locale: "en").title == "It's Anna's birthday today")
            #expect(templates.renderAsk(firstName: "Jonas", name: "Jonas", senderName: nil, locales: ["de"]).title
                    == "Kurze Frage")
            // A regional override (POSIX-style folder name) is used for that region only.
            let austrian = templates.renderAsk(firstName: "Jonas", name: "Jonas", senderName: nil, locales: ["de-at"])
            #expect(austrian.locale == "de-AT")
            #expect(austrian.title == "Servus" && austrian.body == "Servus Jonas!")
            // A new language, CRLF line endings.
            let italian = templates.renderAsk(firstName: "Gia", name: "Gia", senderName: nil, locales: ["it-IT"])
            #expect(italian.locale == "it")
            #expect(italian.title == "Domanda" && italian.body == "Ciao Gia!")
        }
    }

    @Test func missingOverrideFolderIsFine() throws {
        let templates = try MessageTemplates(overrideDirectory: "/nonexistent/birthdaybuzz/templates")
        #expect(templates.locales(for: .reminder) == Self.shippedLocales)
    }

    @Test func brokenOverrideNamesFileLineAndColumn() throws {
        let (root, error) = try Self.loadError([
            "de/reminder.mustache": "{{name}} hat Geburtstag\n\nHallo,\nsiehe {{#today}}heute\n",
        ])
        let found = try #require(error)
        let path = root + "/de/reminder.mustache"
        #expect(found.description == path + ":4:7: unclosed section \"today\"")
        #expect(found.file == path && found.line == 4 && found.column == 7)
    }

    @Test func otherBrokenTemplates() throws {
        func check(_ text: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let (root, error) = try Self.loadError(["en/ask.mustache": text])
            let found = try #require(error, sourceLocation: sourceLocation)
            #expect(found.description == root + "/en/ask.mustache:" + expected, sourceLocation: sourceLocation)
        }
        // The shape: title line, blank line, body.
        try check("Quick question\nHey {{first_name}}\n",
                  "2:1: expected a blank line after the title: a template is a title line, a blank line, then the body")
        try check("Quick question\n", "2:1: the file ends after the title: expected a blank line, then the body")
        try check("\n\nHey\n", "1:1: the first line must be the title (subject); it is empty")
        try check("Quick question\n\n\n", "3:1: the body is empty")
        // Tags.
        try check("Hi {{#sender_name}}{{sender_name}}\n\nHey\n", "1:4: unclosed section \"sender_name\"")
        try check("Hi\n\n{{#sender_name}}\nx\n{{/name}}\n",
                  "5:1: {{/name}} does not close section \"sender_name\" (opened at 3:1)")
        try check("Hi\n\nHey {{/name}}\n", "3:5: {{/name}} closes no open section")
        try check("Hi\n\nHey {{frist_name}}\n",
                  "3:5: unknown variable \"frist_name\" (ask templates have: first_name, name, sender_name)")
        try check("Hi\n\nHey {{days_until}}\n",
                  "3:5: unknown variable \"days_until\" (ask templates have: first_name, name, sender_name)")
        try check("Hi\n\nHey {{first_name\n", "3:5: tag is never closed with }}")
        try check("Hi\n\nHey {{> footer}}\n", "3:5: partials are not supported in message templates")
        // Reported by the Mustache parser, mapped back to the file.
        try check("Hi\n\nHey\nSee {{% LANGUAGE: x}}\n", "4:5: unknown pragma: only CONTENT_TYPE: TEXT or HTML")
        try check("Hi {{fir$t_name}}\n\nHey\n", "1:4: unknown variable \"fir$t_name\" (ask templates have: first_name, name, sender_name)")
        // Transforms and comments are fine.
        let (_, none) = try Self.loadError([
            "en/ask.mustache": "Hi {{uppercased(first_name)}}\n\n{{! a note\nover lines }}Hey {{{name}}} {{&name}}\n",
        ])
        #expect(none == nil)
    }

    // MARK: Bounds (issue 10): nesting, size, linear compiling

    /// ~3,000 nested sections overflowed the stack in swift-mustache's recursive parser
    /// (a segfault in tick, a dead daemon on SIGHUP): more than `maxNesting` is an error.
    @Test func deepNestingIsRejectedWhereItGoesTooDeep() throws {
        let depth = 3_000
        let body = String(repeating: "{{#today}}", count: depth) + "x" + String(repeating: "{{/today}}", count: depth)
        let (root, error) = try Self.loadError(["en/reminder.mustache": "Hi {{name}}\n\n" + body + "\n"])
        let found = try #require(error)
        let column = 1 + MessageTemplates.maxNesting * "{{#today}}".count
        #expect(found.description == root + "/en/reminder.mustache:3:\(column): sections nested more than 32 deep")
        // As deep as allowed loads and renders.
        let deepest = MessageTemplates.maxNesting
        let fits = String(repeating: "{{#today}}", count: deepest) + "{{name}}" + String(repeating: "{{/today}}", count: deepest)
        var shipped = ShippedTemplates.all
        shipped["en/reminder"] = "T\n\n" + fits + "\n"
        let templates = try MessageTemplates(overrideDirectory: nil, shipped: shipped)
        let text = templates.renderReminder(name: "Sam", firstName: "Sam", daysUntil: 0, age: nil, date: try Self.monday(), locale: "en")
        #expect(text.body == "Sam")
        // Inverted and block sections count too.
        let mixed = String(repeating: "{{^later}}{{$b}}", count: 20) + String(repeating: "{{/b}}{{/later}}", count: 20)
        #expect(Self.shippedError(["en/reminder": "T\n\n" + mixed + "\n"])?.message == "sections nested more than 32 deep")
    }

    /// A set-delimiter tag would hide the tags after it from the checks (and the nesting bound).
    @Test func setDelimiterTagsAreRejected() throws {
        let error = Self.shippedError(["en/ask": "Hi\n\nHey {{=<% %>=}}<%first_name%>\n"])
        #expect(error?.description == "templates/en/ask.mustache:3:5: set-delimiter tags are not supported in message templates")
    }

    @Test func aTemplateFileOverOneMiBIsRejected() throws {
        let (root, error) = try Self.loadError(["en/ask.mustache": "Hi\n\n" + String(repeating: "x", count: 1 << 20) + "\n"])
        #expect(error?.description == root + "/en/ask.mustache: cannot read the file (is larger than 1 MiB)")
    }

    /// `{{name}}` 100,000 times took minutes: swift-mustache counts the characters left
    /// at every tag. Compiled in pieces of about `chunkLength` characters, the work per
    /// tag is bounded by the piece, not by the template. (5,000 tags here: hundreds of
    /// pieces either way, at a twentieth of the debug build's CPU.)
    @Test func fiveThousandTagsCompileInShortPiecesAndRenderWhole() throws {
        let count = 5_000
        let title = String(repeating: "{{name}}", count: count)
        let scan = try MessageTemplates.checkTags(title, firstLine: 1, kind: .reminder, file: "t")
        let bounds = [0] + scan.cuts + [title.count]
        let longest = zip(bounds, bounds.dropFirst()).map { $1 - $0 }.max() ?? 0
        #expect(longest <= ChunkedTemplate.chunkLength + "{{name}}".count, "pieces stay short")
        #expect(scan.cuts.count >= title.count / (ChunkedTemplate.chunkLength + 8))

        var shipped = ShippedTemplates.all
        shipped["en/reminder"] = title + "\n\n" + String(repeating: "{{first_name}} ", count: 1_000) + "\n"
        let templates = try MessageTemplates(overrideDirectory: nil, shipped: shipped)
        let date = try Self.monday()
        for text in [templates.renderReminder(name: "Sam", firstName: "Al", daysUntil: 3, age: nil, date: date, locale: "en"),
                     templates.renderReminderUncached(name: "Sam", firstName: "Al", daysUntil: 3, age: nil, date: date, locale: "en")] {
            #expect(text.title == String(repeating: "Sam", count: count))
            #expect(text.body == String(repeating: "Al ", count: 999) + "Al")
        }
    }

    /// A section cannot be cut: one with 100,000 tags would still take minutes. Over the
    /// parse budget it is an error, placed where the piece that holds it starts. (Twice the
    /// tags that reach the budget: a section of `n` tags costs about 2n × 8n.)
    @Test func aSectionTooBigToCompileQuicklyIsAnError() throws {
        let overBudget = 2 * Int(Double(ChunkedTemplate.parseBudget / 16).squareRoot())
        let section = "{{#today}}" + String(repeating: "{{name}}", count: overBudget) + "{{/today}}"
        let error = Self.shippedError(["en/reminder": "Birthday\n\nHi {{first_name}},\n" + section + "\n"])
        #expect(error?.description == "templates/en/reminder.mustache:3:1: too many tags in one section "
                + "(or in a line of comments and sections) from here: keep sections short")
        // The shipped templates are far below it (a 500th; the digest, which names
        // every kind, is the longest), even uncut.
        for (key, text) in ShippedTemplates.all {
            #expect(text.count * text.count(where: { $0 == "{" }) < ChunkedTemplate.parseBudget / 500, "\(key)")
        }
    }

    /// Pieces render exactly what the whole renders: cut at every place `ChunkCuts` allows
    /// (chunk length 1), around standalone tags, indentation, blank lines and comments.
    @Test(arguments: [
        "{{#today}}\n  Today!\n{{/today}}\n{{^today}}\n  {{days_until}} days\n{{/today}}\nBye {{name}}\n",
        "  {{! note }}\n  {{name}}  {{#has_age}} {{age}} {{/has_age}}  \n\t{{#later}}\n\tlater\n\t{{/later}}\n",
        "a{{!c}}b{{!c}}\n{{!c}}{{!c}}\n  {{!c}}  \n {{!c}}x {{name}}{{! multi\nline }}  {{#today}}y{{/today}} z",
        "{ {{name}} {x} {{{name}}}{{& name}}{{{first_name}}}{ {{#today}}{{.}}{{/today}} { ",
        "{{%CONTENT_TYPE: HTML}}{{name}} {{name}}\n{{name}}",
        "x\r{{#today}}\r\ny\u{2028}{{/today}}\u{85}  {{!c}}\u{2028}  {{!d}}x{{name}}",
        "{{$b}}default {{name}}{{/b}}\n  {{$b}}\n  {{name}}\n  {{/b}}\n{{uppercased(name)}}{{first_name}}",
    ])
    func piecesRenderAsTheWholeTemplate(_ text: String) {
        #expect(MessageTemplates.piecesRenderAsWhole(text, kind: .reminder))
    }

    /// Found by `scripts/fuzz.sh templates` (first byte: the kind, 0 = reminder): a piece
    /// started after `{{/today}}` had taken its line break along; the parser carries on
    /// from there as after `{{#today}}`, which did not stand alone, so `{{#tomorrow}}`
    /// below it did not either, and its line break was output.
    @Test func fuzzCaseNoPieceStartsAfterAStandaloneClosingTag() {
        let bytes: [UInt8] = [
            0x00, 0x7B, 0x7B, 0x23, 0x74, 0x6F, 0x64, 0x61, 0x79, 0x7D, 0x7D, 0x7B, 0x7B, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x20, 0x66, 0xC3, 0xAA, 0x74,
            0x65, 0x20, 0x73, 0x6F, 0x6E, 0x20, 0x61, 0x6E, 0x6E, 0x69, 0x76, 0x65, 0x72, 0x73, 0x61, 0x69, 0x72, 0x65, 0x20, 0x61, 0x75, 0x6A, 0x6F, 0x75,
            0x72, 0x67, 0x65, 0x6E, 0x74, 0x69, 0x6C, 0x73, 0x20, 0x6C, 0x75, 0x69, 0x20, 0x66, 0x65, 0x72, 0x6F, 0x6E, 0x74, 0x20, 0x73, 0xC3, 0xBB, 0x72,
            0x65, 0x6D, 0x65, 0x6E, 0x74, 0x20, 0x70, 0x6C, 0x61, 0x69, 0x73, 0x69, 0x72, 0x2E, 0x0A, 0x7B, 0x7B, 0x2F, 0x74, 0x6F, 0x64, 0x61, 0x79, 0x7D,
            0x7D, 0x0A, 0x7B, 0x7B, 0x23, 0x74, 0x6F, 0x6D, 0x6F, 0x72, 0x72, 0x6F, 0x77, 0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x23, 0x68, 0x61, 0x73, 0x5F, 0x61,
            0x67, 0x65, 0x7D, 0x7D, 0x7B, 0x7B, 0x66, 0x69, 0x72, 0x73, 0x74, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x20, 0x61, 0x75, 0x72, 0x61, 0x20,
            0x7B, 0x7B, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x20, 0x61, 0x6E, 0x73, 0x20, 0x64, 0x65, 0x6D, 0x61, 0x69, 0x6E, 0x2C, 0x20, 0x7B, 0x7B, 0x64, 0x61,
            0x74, 0x65, 0x7D, 0x7D, 0x2E, 0x7B, 0x7B, 0x2F, 0x68, 0x61, 0x73, 0x5F, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x7B, 0x7B, 0x5E, 0x68, 0x61, 0x73, 0x5F,
            0x61, 0x67, 0x65, 0x7D, 0x7D, 0x7B, 0x7B, 0x66, 0x69, 0x72, 0x73, 0x74, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x20, 0x66, 0xC3, 0xAA, 0x74,
            0x65, 0x20, 0x73, 0x6F, 0x6E, 0x20, 0x61, 0x6E, 0x6E, 0x69, 0x76, 0x65, 0x72, 0x73, 0x61, 0x69, 0x72, 0x65, 0x20, 0x64, 0x65, 0x6D, 0x61, 0x69,
            0x6E, 0x2C, 0x20, 0x7B, 0x7B, 0x64, 0x61, 0x74, 0x65, 0x7D, 0x7D, 0x2E, 0x7B, 0x7B, 0x2F, 0x68, 0x61, 0x73, 0x5F, 0x61, 0x67, 0x65, 0x7D, 0x7D,
            0x0A, 0x54, 0x75, 0x20, 0x61, 0x73, 0x20, 0x65, 0x6E, 0x63, 0x6F, 0x72, 0x65, 0x20, 0x6C, 0x65, 0x20, 0x74, 0x65, 0x6D, 0x70, 0x73, 0x20, 0x64,
            0x65, 0x20, 0x70, 0x72, 0xC3, 0xA9, 0x76, 0x6F, 0x69, 0x72, 0x20, 0x75, 0x6E, 0x20, 0x61, 0x70, 0x70, 0x65, 0x6C, 0x2C, 0x20, 0x75, 0x6E, 0x65,
            0x20, 0x63, 0x61, 0x72, 0x74, 0x65, 0x20, 0x6F, 0x75, 0x20, 0x75, 0x6E, 0x65, 0x20, 0x70, 0x65, 0x74, 0x69, 0x74, 0x65, 0x20, 0x73, 0x75, 0x72,
            0x70, 0x72, 0x69, 0x73, 0x65, 0x2E, 0x0A, 0x7B, 0x7B, 0x2F, 0x74, 0x6F, 0x6D, 0x6F, 0x72, 0x72, 0x6F, 0x77, 0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x23,
            0x6C, 0x61, 0x74, 0x65, 0x72, 0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x23, 0x68, 0x61, 0x73, 0x5F, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x7B, 0x7B, 0x66, 0x69,
            0x72, 0x73, 0x74, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x20, 0x61, 0x75, 0x72, 0x61, 0x20, 0x7B, 0x7B, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x20,
            0x61, 0x6E, 0x73, 0x20, 0x6C, 0x65, 0x20, 0x7B, 0x7B, 0x64, 0x61, 0x74, 0x65, 0x7D, 0x7D, 0x2C, 0x20, 0x64, 0x61, 0x6E, 0x73, 0x20, 0x7B, 0x7B,
            0x64, 0x61, 0x79, 0x73, 0x5F, 0x75, 0x6E, 0x74, 0x69, 0x6C, 0x7D, 0x7D, 0x20, 0x6A, 0x6F, 0x75, 0x72, 0x73, 0x2E, 0x7B, 0x7B, 0x2F, 0x68, 0x61,
            0x73, 0x5F, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x7B, 0x7B, 0x5E, 0x68, 0x61, 0x73, 0x5F, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x7B, 0x7B, 0x66, 0x69, 0x72,
            0x73, 0x74, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x20, 0x66, 0xC3, 0xAA, 0x74, 0x65, 0x20, 0x73, 0x6F, 0x6E, 0x20, 0x61, 0x6E, 0x6E, 0x69,
            0x76, 0x65, 0x72, 0x73, 0x61, 0x69, 0x72, 0x65, 0x20, 0x6C, 0x65, 0x20, 0x7B, 0x7B, 0x64, 0x61, 0x74, 0x65, 0x7D, 0x7D, 0x2C, 0x20, 0x64, 0x61,
            0x6E, 0x73, 0x20, 0x7B, 0x7B, 0x64, 0x61, 0x79, 0x73, 0x5F, 0x75, 0x6E, 0x74, 0x69, 0x6C, 0x7D, 0x7D, 0x20, 0x6A, 0x6F, 0x75, 0x72, 0x73, 0x2E,
            0x7B, 0x7B, 0x2F, 0x68, 0x61, 0x73, 0x5F, 0x61, 0x67, 0x65, 0x7D, 0x7D, 0x0A, 0x54, 0x75, 0x20, 0x61, 0x73, 0x20, 0x74, 0x6F, 0x75, 0x74, 0x20,
            0x6C, 0x65, 0x20, 0x74, 0x65, 0x6D, 0x70, 0x73, 0x20, 0x64, 0x65, 0x20, 0x70, 0x65, 0x6E, 0x73, 0x65, 0x72, 0x20, 0xC3, 0xA0, 0x20, 0x75, 0x6E,
            0x65, 0x20, 0x6A, 0x6F, 0x6C, 0x69, 0x65, 0x20, 0x61, 0x74, 0x74, 0x65, 0x6E, 0x74, 0x69, 0x6F, 0x6E, 0x2E, 0x0A, 0x7B, 0x7B, 0x2F, 0x6C, 0x61,
            0x74, 0x65, 0x72, 0x7D, 0x7D, 0x0A,
        ]
        #expect(MessageTemplates.piecesRenderAsWhole(String(decoding: bytes.dropFirst(), as: UTF8.self), kind: .reminder))
        #expect(MessageTemplates.piecesRenderAsWhole("{{#today}}x\n{{/today}}\n{{#later}}\ny{{/later}}", kind: .reminder))
        // Also found by it: after `{{/sender_name}}` at the start of a line, the parser is at
        // a line's start again (its `{{#…}}` stood alone): a piece ending in a space lost it.
        #expect(MessageTemplates.piecesRenderAsWhole("{{#sender_name}}\n{{sender_name}}\n{{/sender_name}} fa\u{0C}mily\n",
                                                     kind: .ask))
        #expect(MessageTemplates.piecesRenderAsWhole("{{#sender_name}}\n{{/sender_name}} {{!c}}x {{^name}}\n{{/name}}{{!c}}y",
                                                     kind: .ask))
    }

    /// Found by `scripts/fuzz.sh templates` (first byte 1: an ask): the second case above,
    /// in the form it was found.
    @Test func fuzzCaseSpaceAfterAClosingTagAtTheStartOfALine() {
        let bytes: [UInt8] = [
            0x01, 0x51, 0x75, 0x69, 0x63, 0x6B, 0x20, 0x71, 0x21, 0x75, 0x65, 0x73, 0x74, 0x69, 0x6F, 0x6E, 0x0A, 0x0A, 0x48, 0x65, 0x79, 0x20, 0x7B, 0x7B,
            0x66, 0x69, 0x72, 0x73, 0x74, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x2C, 0x20, 0x49, 0x27, 0x6D, 0x20, 0x75, 0x70, 0x64, 0x61, 0x74, 0x69,
            0x6E, 0x67, 0x20, 0x6D, 0x79, 0x20, 0x63, 0x6F, 0x6E, 0x74, 0x61, 0x63, 0x74, 0x73, 0x20, 0x66, 0x6F, 0x72, 0x20, 0x63, 0x6C, 0x6F, 0x73, 0x65,
            0x20, 0x66, 0x72, 0x69, 0x65, 0x6E, 0x64, 0x73, 0x20, 0x61, 0x6E, 0x64, 0x0A, 0x48, 0x65, 0x79, 0x20, 0x7B, 0x7B, 0x66, 0x69, 0x72, 0x73, 0x74,
            0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x2C, 0x20, 0x49, 0x27, 0x6D, 0x20, 0x75, 0x70, 0x64, 0x61, 0x74, 0x69, 0x6E, 0x67, 0x20, 0x6D, 0x79,
            0x20, 0x63, 0x6F, 0x6E, 0x74, 0x61, 0x63, 0x74, 0x73, 0x20, 0x66, 0x6F, 0x72, 0x20, 0x63, 0x6C, 0x6F, 0x73, 0x65, 0x20, 0x66, 0x72, 0x69, 0x65,
            0x6E, 0x64, 0x73, 0x20, 0x61, 0x6E, 0x64, 0x20, 0x66, 0x61, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C,
            0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C,
            0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C,
            0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x6D, 0x69, 0x6C, 0x79, 0x2E, 0x20, 0x57, 0x68, 0x61, 0x74, 0x27, 0x73, 0x20, 0x79, 0x6F, 0x75, 0x72,
            0x20, 0x62, 0x69, 0x72, 0x74, 0x68, 0x64, 0x61, 0x79, 0x20, 0x28, 0x64, 0x61, 0x79, 0x20, 0x61, 0x6E, 0x64, 0x20, 0x6D, 0x6F, 0x6E, 0x74, 0x68,
            0x3B, 0x20, 0x74, 0x68, 0x65, 0x20, 0x79, 0x65, 0x61, 0x72, 0x24, 0x69, 0x66, 0x20, 0x79, 0x6F, 0x75, 0x20, 0x6C, 0x69, 0x6B, 0x00, 0x23, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x65, 0x29, 0x3F, 0x0A, 0x0A, 0x54, 0x68, 0x61, 0x6E, 0x6B, 0x73, 0x21, 0x0A,
            0x7B, 0x7B, 0x23, 0x73, 0x65, 0x6E, 0x64, 0x65, 0x72, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x73, 0x65, 0x6E, 0x64, 0x65,
            0x72, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x2F, 0x73, 0x65, 0x6E, 0x64, 0x65, 0x72, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D,
            0x7D, 0x20, 0x66, 0x61, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C,
            0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C,
            0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C,
            0x0C, 0x6D, 0x69, 0x6C, 0x79, 0x2E, 0x20, 0x57, 0x68, 0x61, 0x74, 0x27, 0x73, 0x20, 0x79, 0x6F, 0x75, 0x72, 0x20, 0x62, 0x69, 0x72, 0x74, 0x68,
            0x64, 0x61, 0x79, 0x20, 0x28, 0x64, 0x61, 0x79, 0x20, 0x61, 0x6E, 0x64, 0x20, 0x6D, 0x6F, 0x6E, 0x74, 0x68, 0x3B, 0x20, 0x74, 0x68, 0x65, 0x20,
            0x79, 0x65, 0x61, 0x72, 0x24, 0x69, 0x66, 0x20, 0x79, 0x6F, 0x75, 0x20, 0x6C, 0x69, 0x6B, 0x00, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x65, 0x29, 0x3F, 0x0A, 0x0A, 0x54, 0x68, 0x61, 0x6E, 0x6B, 0x73, 0x21, 0x0A, 0x7B, 0x7B, 0x23, 0x73, 0x65, 0x6E,
            0x64, 0x65, 0x72, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x73, 0x65, 0x6E, 0x64, 0x65, 0x72, 0x5F, 0x6E, 0x61, 0x6D, 0x65,
            0x7D, 0x7D, 0x0A, 0x7B, 0x7B, 0x2F, 0x73, 0x65, 0x6E, 0x64, 0x65, 0x72, 0x5F, 0x6E, 0x61, 0x6D, 0x65, 0x7D, 0x7D, 0x0A,
        ]
        #expect(MessageTemplates.piecesRenderAsWhole(String(decoding: bytes.dropFirst(), as: UTF8.self), kind: .ask))
    }

    @Test func shippedTemplatesRenderTheSameInPieces() {
        for (key, text) in ShippedTemplates.all {
            let kind: MessageTemplates.Kind = key.hasSuffix("/ask") ? .ask : .reminder
            #expect(MessageTemplates.piecesRenderAsWhole(text, kind: kind), "\(key)")
        }
    }

    @Test func overrideFolderMistakes() throws {
        let (root1, misplaced) = try Self.loadError(["reminder.mustache": "T\n\nB\n"])
        #expect(misplaced?.description == root1 + "/reminder.mustache: templates go in a locale folder, e.g. "
                + root1 + "/en/reminder.mustache")
        let (root2, typo) = try Self.loadError(["de/remnder.mustache": "T\n\nB\n"])
        let names = MessageTemplates.Kind.allCases.map { "\($0.rawValue).mustache" }
        #expect(names.starts(with: ["reminder.mustache", "anniversary.mustache"]) && names.contains("wish.mustache"))
        #expect(typo?.description == root2 + "/de/remnder.mustache: unknown template; "
                + "expected " + names.dropLast().joined(separator: ", ") + " or " + names.last!)
        let (_, twice) = try Self.loadError(["de-AT/ask.mustache": "T\n\nB\n", "de_AT/ask.mustache": "T\n\nB\n"])
        #expect(twice?.message.hasPrefix("same locale as ") == true)
        let (_, backup) = try Self.loadError(["de/reminder.mustache~": "broken {{#x", ".hidden/ask.mustache": "x"])
        #expect(backup == nil)
    }

    @Test func anOverrideThatIsNotUTF8NamesItsLine() throws {
        let root = TestFolders.temporary.appendingPathComponent("buzz-templates-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/fr", withIntermediateDirectories: true)
        // "Anniversaire" then a Latin-1 "é" on the body line.
        try Data(Array("Anniversaire\n\nBonne f".utf8) + [0xE9] + Array("te\n".utf8))
            .write(to: URL(fileURLWithPath: root + "/fr/reminder.mustache"))
        let error = #expect(throws: TemplateError.self) { try MessageTemplates(overrideDirectory: root) }
        #expect(error?.description == root + "/fr/reminder.mustache:3: the file is not UTF-8 text (save it as UTF-8)")
    }

    @Test func brokenOrIncompleteShippedTemplates() {
        #expect(Self.shippedError(["fr/reminder": "Titre\nCorps\n"])?.description == "templates/fr/reminder.mustache:2:1: "
                + "expected a blank line after the title: a template is a title line, a blank line, then the body")
        #expect(Self.shippedError(["fr/letter": "T\n\nB\n"])?.file == "templates/fr/letter.mustache")
        var noEnglish = ShippedTemplates.all
        noEnglish["en/ask"] = nil
        do {
            _ = try MessageTemplates(overrideDirectory: nil, shipped: noEnglish)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "templates/en/ask.mustache: missing: every kind needs an English template to fall back to")
        }
    }

    // MARK: Embedded copy

    /// Wishes (docs/design/asks-and-wishes.md): short, warm, in each shipped language, with the age
    /// only when it is known and the sender's name only when configured.
    @Test(arguments: ["en", "de", "fr", "es"])
    func wishesInEveryShippedLanguage(locale: String) throws {
        let templates = try MessageTemplates(overrideDirectory: nil)
        let withAge = templates.renderWish(firstName: "Ana", name: "Ana Lima", age: 37, senderName: "Alex", locales: [locale])
        #expect(withAge.locale == locale)
        #expect(withAge.body.contains("Ana") && withAge.body.contains("37") && withAge.body.hasSuffix("Alex"), "\(withAge)")
        #expect(withAge.body.count < 240, "short: \(withAge.body)")
        let plain = templates.renderWish(firstName: "Ana", name: "Ana Lima", age: nil, senderName: nil, locales: [locale])
        #expect(!plain.body.contains("37") && !plain.body.contains("  ") && !plain.body.hasSuffix("\n"), "\(plain)")
        #expect(!plain.title.isEmpty && plain.title == withAge.title)
    }

    @Test func embeddedTemplatesMatchTheFolder() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("templates")
        var onDisk: [String: String] = [:]
        for locale in try FileManager.default.contentsOfDirectory(atPath: root.path) where !locale.hasPrefix(".") {
            let folder = root.appendingPathComponent(locale)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".mustache") {
                let data = try Data(contentsOf: folder.appendingPathComponent(name))
                onDisk["\(locale)/\(name.dropLast(".mustache".count))"] = String(decoding: data, as: UTF8.self)
            }
        }
        // Every kind's template (each occasion kind's, ask, wish, notice, digest) in four languages.
        #expect(onDisk.count == 4 * MessageTemplates.Kind.allCases.count)
        #expect(Set(onDisk.keys) == Set(ShippedTemplates.all.keys),
                "the embedded templates are out of date: the EmbedTemplates plugin did not run")
        for (key, text) in onDisk {
            #expect(ShippedTemplates.all[key] == text,
                    "\(key) differs from templates/\(key).mustache: the EmbedTemplates plugin did not run")
            #expect(text.hasSuffix("\n"))
        }
    }
}
