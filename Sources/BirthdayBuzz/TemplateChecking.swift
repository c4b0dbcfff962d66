import Foundation
// Linked explicitly: with --static-swift-stdlib, DateFormatter finds no locale data without it (docs/design/decisions.md).
#if canImport(FoundationInternationalization)
import FoundationInternationalization
#endif
import Mustache
import Synchronization

// Reading and checking templates: the override folders, the title/body
// split, and the tag checker that gives every mistake a file:line:column.

// MARK: - Loading and checking

extension MessageTemplates {
    private static let textPragma = "{{% CONTENT_TYPE: TEXT}}\n"

    /// Checks and compiles one folder's overrides (`<locale>/<kind>.mustache`,
    /// as `TemplateFolders` in BuzzFiles read them); keys are
    /// `"<canonical locale>/<kind>"`.
    static func compileOverrides(_ files: [TemplateOverride]) throws(TemplateError) -> [String: Compiled] {
        var result: [String: Compiled] = [:]
        var folderOf: [String: String] = [:]   // canonical locale → folder name, to catch de_AT next to de-AT
        for file in files {
            let folder = file.localeFolderPath
            guard let locale = canonicalTag(file.localeFolder) else {
                throw TemplateError(file: folder, line: 0, column: 0,
                                    message: "folder name is not a locale tag like en, de or de-AT")
            }
            if let other = folderOf[locale], other != file.localeFolder {
                throw TemplateError(file: folder, line: 0, column: 0,
                                    message: "same locale as \(file.directoryPrefix)\(other); keep one of the two folders")
            }
            folderOf[locale] = file.localeFolder
            guard let kind = Kind(rawValue: String(file.fileName.dropLast(".mustache".count))) else {
                throw TemplateError(file: file.path, line: 0, column: 0,
                                    message: "unknown template; expected \(Kind.namesList)")
            }
            result["\(locale)/\(kind.rawValue)"] = try compile(file.text, kind: kind, file: file.path)
        }
        return result
    }

    /// Splits "title line, blank line, body", then checks and compiles both parts.
    static func compile(_ raw: String, kind: Kind, file: String) throws(TemplateError) -> Compiled {
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
                // and a fallback's channels, `.` and transforms are about the list, which
                // such texts never cache.
                let inList = open.contains { $0.name == "gift_ideas" || $0.name == "notes" || $0.name == "fallback_for" }
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

    /// What `checkTags` finds besides errors.
    struct TagScan {
        var namesArePlain: Bool
        /// Character offsets where the text may be cut into separately compiled pieces.
        var cuts: [Int]
    }
}

/// One override template as read from the user's folder
/// (`<directory>/<localeFolder>/<fileName>`): the core checks its names and
/// compiles its text, and does no reading itself.
public struct TemplateOverride: Sendable, Equatable {
    /// The override folder as configured (`~/.config/birthdaybuzz/templates`).
    public var directory: String
    /// The locale folder's name as written (`de-AT`, `de_AT`).
    public var localeFolder: String
    /// `reminder.mustache`…
    public var fileName: String
    public var text: String

    public init(directory: String, localeFolder: String, fileName: String, text: String) {
        self.directory = directory
        self.localeFolder = localeFolder
        self.fileName = fileName
        self.text = text
    }

    var directoryPrefix: String { directory.hasSuffix("/") ? directory : directory + "/" }
    var localeFolderPath: String { directoryPrefix + localeFolder }
    /// The file, for messages.
    public var path: String { localeFolderPath + "/" + fileName }
}
