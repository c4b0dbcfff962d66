import Foundation
import Testing
@testable import BirthdayBuzz

/// Every header of a mail is folded (RFC 5322 §2.2.3): no line over 78
/// characters where a fold is possible, none ever over 998 (a server answers
/// "500 Line too long"), and unfolding and decoding gives back the value —
/// for names up to what a card can hold (issue 18: a 984-character name made
/// a Subject of over 998 octets).
@Suite struct MailHeaderFoldingTests {
    static let from = Mailbox("BirthdayBuzz <buzz@example.org>")!

    /// The longest FN a card can carry: the reader keeps a line of up to `maxLineBytes`.
    static let longestName = String(repeating: "Ä", count: (VCardReader().maxLineBytes - "FN:".utf8.count) / 2)

    static let names: [String] = [
        String(repeating: "A", count: 984),  // the issue's: no space to fold at
        String(repeating: "Anna ", count: 200).trimmingCharacters(in: .whitespaces),
        String(repeating: "Jürgen-Weiß ", count: 90).trimmingCharacters(in: .whitespaces),
        String(repeating: "🎂", count: 300),  // four-byte characters: never split between two encoded words
        String(repeating: "O\"Brien\\ ", count: 120).trimmingCharacters(in: .whitespaces),
        "Tom =?UTF-8?B?QUJD?= Jerry " + String(repeating: "x", count: 100),  // looks like an encoded word: encoded itself
        String(repeating: "A", count: 70) + " " + String(repeating: "B", count: 76) + " " + String(repeating: "C", count: 77),
        longestName,
    ]

    /// The header block's lines as sent, and its fields unfolded (CRLF before
    /// a space removed, nothing else). On bytes: a header can be megabytes.
    static func header(_ bytes: [UInt8]) -> (lines: [String], fields: [(name: String, value: String)]) {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A {
                if index == start { break }  // the empty line: the body follows
                lines.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        var fields: [(name: String, value: [ArraySlice<UInt8>])] = []
        for line in lines {
            if line.first == 0x20 || line.first == 0x09 {
                fields[fields.count - 1].value.append(line)
            } else {
                let colon = line.firstIndex(of: UInt8(ascii: ":"))!
                fields.append((String(decoding: line[..<colon], as: UTF8.self), [line[(colon + 1)...].dropFirst()]))
            }
        }
        return (lines.map { String(decoding: $0, as: UTF8.self) },
                fields.map { field in
                    var value: [UInt8] = []
                    for piece in field.value { value.append(contentsOf: piece) }
                    return (field.name, String(decoding: value, as: UTF8.self))
                })
    }

    /// RFC 2047 decoding of `B` words in UTF-8, written for the test: the
    /// space between two encoded words goes (§6.2), any other text stays.
    /// (The values are single-spaced: a header value is one line.)
    static func decoded(_ value: String) throws -> String {
        var out: [UInt8] = []
        var previousWasWord = false
        let prefix = Array("=?UTF-8?B?".utf8)
        for (index, token) in value.utf8.split(separator: 0x20, omittingEmptySubsequences: false).enumerated() {
            let isWord = token.count >= 12 && token.starts(with: prefix) && token.reversed().starts(with: [0x3D, 0x3F])
            if index > 0, !(isWord && previousWasWord) { out.append(0x20) }
            if isWord {
                let base64 = String(decoding: token.dropFirst(10).dropLast(2), as: UTF8.self)
                let bytes = try #require(Data(base64Encoded: base64))
                // Each word is whole characters on its own (§5: no character split between words).
                if String(validating: Array(bytes), as: UTF8.self) == nil { Issue.record("a word that splits a character: \(base64)") }
                out += Array(bytes)
            } else {
                out += Array(token)
            }
            previousWasWord = isWord
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A display name as a header carries it: decoded, then unquoted if it was a quoted string.
    static func displayName(_ text: String) throws -> String {
        let name = try decoded(text)
        guard name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 else { return name }
        var out = ""
        var escaped = false
        for character in name.dropFirst().dropLast() {
            if !escaped, character == "\\" { escaped = true; continue }
            out.append(character)
            escaped = false
        }
        return out
    }

    @Test(arguments: 0..<names.count)
    func everyHeaderIsFoldedAndUnfoldsToItsValue(index: Int) throws {
        let name = Self.names[index]
        let subject = "Birthday of " + name + " tomorrow"
        let contact = try #require(Mailbox(name: name, address: "contact@example.org"))
        // The longest name once (in To), not four times: a debug build takes a while over megabytes.
        let huge = name.utf8.count > 100_000
        let me = try #require(Mailbox(name: "Me " + (huge ? "Ann" : name), address: "me@example.org"))
        let longFrom = try #require(Mailbox(name: huge ? "Buzz" : name, address: "buzz@example.org"))
        let bytes = MailMessage.compose(from: longFrom, to: [contact, me, Mailbox("plain@example.org")!], subject: subject,
                                        body: "b", eventID: "e", date: Date(timeIntervalSince1970: 0))
        let (lines, fields) = Self.header(bytes)
        // Checked line by line, recorded only when wrong: one #expect per line of a megabyte header costs seconds.
        let long = lines.first { $0.utf8.count > 78 }
        #expect(long == nil, "a header line of \(long?.utf8.count ?? 0) octets: \(long?.prefix(100) ?? "")")
        #expect(!lines.contains { $0.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 } }, "a line of white space only")
        #expect(fields.map(\.name) == ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Content-Type",
                                       "Content-Transfer-Encoding"])
        let value = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(Array(try Self.decoded(try #require(value["Subject"])).utf8) == Array(subject.utf8))

        let from = try #require(value["From"])
        #expect(from.hasSuffix(" <buzz@example.org>"))
        #expect(try Self.displayName(String(from.dropLast(" <buzz@example.org>".count))) == (huge ? "Buzz" : name))

        let to = try #require(value["To"])
        if huge {
            let expected = name + " <contact@example.org>, \"Me Ann\" <me@example.org>, plain@example.org"
            #expect(Array(try Self.decoded(to).utf8) == Array(expected.utf8))
            return
        }
        let parts = to.components(separatedBy: ", ")
        #expect(parts.count == 3 && parts[2] == "plain@example.org", "\(to.prefix(200))")
        #expect(parts[0].hasSuffix(" <contact@example.org>") && parts[1].hasSuffix(" <me@example.org>"))
        #expect(try Self.displayName(String(parts[0].dropLast(" <contact@example.org>".count))) == name)
        #expect(try Self.displayName(String(parts[1].dropLast(" <me@example.org>".count))) == "Me " + (huge ? "Ann" : name))
    }

    /// Short values stay as they were: one line, plain ASCII where it was ASCII.
    @Test func shortValuesStayOnOneLine() throws {
        let to = try #require(Mailbox(name: "Ann O'Neil", address: "ann@example.org"))
        let bytes = MailMessage.compose(from: Self.from, to: to, subject: "Ann turns 40 tomorrow", body: "b", eventID: "e",
                                        date: Date(timeIntervalSince1970: 0))
        let (lines, _) = Self.header(bytes)
        #expect(lines.contains("Subject: Ann turns 40 tomorrow"))
        #expect(lines.contains("To: \"Ann O'Neil\" <ann@example.org>"))
        #expect(lines.contains("From: \"BirthdayBuzz\" <buzz@example.org>"))
        #expect(!lines.contains { $0.hasPrefix(" ") })
    }

    /// RFC 2047 §2: an encoded word is at most 75 characters; the first fits after the header's name.
    @Test func encodedWordsAreAtMost75CharactersAndTheFirstFitsItsLine() {
        let words = MailMessage.encodedWords(String(repeating: "ü", count: 500), room: 78 - "Subject: ".count)
        #expect(words.allSatisfy { $0.count <= 75 && $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") })
        #expect(words[0].count <= 78 - "Subject: ".count)
        #expect(MailMessage.folded("Subject", words).components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 })
    }

    /// HTTP headers are not folded: the webhook's `Title` stays one line.
    @Test func theWebhookTitleStaysOneLine() throws {
        let value = MailMessage.encodedHeaderValue(String(repeating: "Jürgen ", count: 100))
        #expect(!value.contains("\r") && !value.contains("\n"))
        #expect(try Self.decoded(value) == String(repeating: "Jürgen ", count: 100).trimmingCharacters(in: .whitespaces))
    }
}
