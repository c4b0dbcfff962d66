import Testing
@testable import BirthdayBuzz

/// Names in waybar's `text` and `tooltip`, which it reads as Pango markup.
@Suite struct PangoMarkupTests {
    @Test(arguments: [
        ("Tom & Jerry", "Tom &amp; Jerry"),
        ("<span size=\"50000\">Big</span>", "&lt;span size=&quot;50000&quot;&gt;Big&lt;/span&gt;"),
        ("O'Brien", "O&#39;Brien"),
        ("&amp;", "&amp;amp;"),
        ("🎂 Jürgen\nNext: Ann", "🎂 Jürgen\nNext: Ann"),
        ("", ""),
    ])
    func escapesWhatPangoReadsAsMarkup(text: String, expected: String) {
        #expect(PangoMarkup.escaped(text) == expected)
    }
}
