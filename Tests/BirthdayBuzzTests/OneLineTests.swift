import BirthdayBuzz
import Testing

/// Issue 10 point 13: what error messages and log records quote stays on one line.
@Suite struct OneLineTests {
    @Test func lineBreaksAndControlsAreEscaped() {
        #expect(OneLine.escaped("a@b.c\r\nBcc: x@y") == #"a@b.c\r\nBcc: x@y"#)
        #expect(OneLine.escaped("one\ntwo\rthree") == #"one\ntwo\rthree"#)
        #expect(OneLine.escaped("bell\u{07} esc\u{1B}[31m del\u{7F} nel\u{85} ls\u{2028}ps\u{2029}")
                == #"bell\u{7} esc\u{1B}[31m del\u{7F} nel\u{85} ls\u{2028}ps\u{2029}"#)
    }

    @Test func plainTextIsUnchanged() {
        for text in ["", "config.toml:12:5: reminders.time: \"25:00\" is not a time", "tab\tkept", "Zoë “Ørsted” – ok ✓",
                     "\u{5D3}\u{5E0}\u{5D4}", "no\u{A0}break"] {
            #expect(OneLine.escaped(text) == text)
        }
    }
}
