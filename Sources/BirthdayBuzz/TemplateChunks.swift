import Foundation
// Linked explicitly: with --static-swift-stdlib, DateFormatter finds no locale data without it (docs/design/decisions.md).
#if canImport(FoundationInternationalization)
import FoundationInternationalization
#endif
import Mustache
import Synchronization

// Templates compiled in pieces, so a rendered reminder is assembled from
// cached parts (the speed of `tick` over 100,000 contacts).

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
        let valueSets: [[String: Any]] = if kind.occasionKind != nil {
            [0, 1, 5].map { days in
                reminderValues(kind: kind, name: "Ann O'Brien", firstName: "Ann", daysUntil: days, age: days == 1 ? nil : 37,
                               date: "Monday, March 15", giftIdeas: days == 0 ? [] : ["a book", "tickets"],
                               notes: days == 5 ? ["likes tea"] : [])
            }
        } else {
            switch kind {
            case .ask:
            [["first_name": "Ann", "name": "Ann <O'Brien>", "sender_name": "Sam"], ["first_name": "", "name": ""]]
            case .wish:
            [["first_name": "Ann", "name": "Ann <O'Brien>", "age": 37, "has_age": true, "sender_name": "Sam"],
             ["first_name": "", "name": "", "has_age": false]]
            case .notice:
            [["count": 1, "one": true, "problems": [["name": "Ann", "occasion": "birthday", "birthday": true, "anniversary": false,
                                                      "date": "Monday, March 15", "reason": "HTTP 500", "hint": "buzz wish Ann",
                                                      "wish": true]]],
             ["count": 0, "one": false, "problems": [[String: Any]]()]]
            default:
            [["entries": [["name": "Ann <O'Brien>", "date": "Monday, March 15", "days_until": 3, "age": 37, "has_age": true,
                           "birthday": true, "gift_ideas": ["a book"], "has_gift_ideas": true] as [String: Any]],
              "problems": [["name": "Bo", "reason": "timeout", "hint": "buzz wish Bo", "has_hint": true] as [String: Any]],
              "has_entries": true, "has_problems": true, "count": 1, "one": true, "days": 7, "week": true,
              "missing_count": 2, "has_missing": true],
             ["entries": [] as [Any], "problems": [] as [Any], "count": 0, "days": 14, "missing_count": 0]]
            }
        }
        return valueSets.allSatisfy { whole.render($0) == cut.render($0) }
    }
}

/// A template compiled as consecutive pieces, rendered one after the other.
///
/// swift-mustache 2.1.1's parser is quadratic: every tag and every `{` costs a count of
/// the characters left to the end of the text (its `Parser` method that reads `count` characters checks
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
