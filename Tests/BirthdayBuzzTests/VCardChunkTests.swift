import Testing
@testable import BirthdayBuzz

/// An over-long line is judged the same whether the text comes whole or in
/// chunks, also right after a property that is not kept (found by
/// scripts/fuzz.sh vcard before issue 10 point 15 was fixed).
@Suite struct VCardChunkTests {
    static func read(_ text: String, chunk: Int?) -> [String] {
        var reader = VCardReader(maxLineBytes: 32)
        var entries: [String] = []
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            let step = chunk ?? raw.count
            while offset < raw.count {
                let end = min(offset + step, raw.count)
                reader.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<end])) { entries.append(String(describing: $0)) }
                offset = end
            }
        }
        reader.finish { entries.append(String(describing: $0)) }
        return entries
    }

    @Test(arguments: [1, 3, 8, 13])
    func anOverLongKeptLineAfterADroppedOneIsReadAlikeInChunks(chunk: Int) {
        let text = "BEGIN:VCARD\nVERSION:3.0\nFN:Ada\nX-FOO:bar\n"
            + "EMAIL;TYPE=home:ada.lovelace@analytical-engine.example.org\nEND:VCARD\n"
        let whole = Self.read(text, chunk: nil)
        #expect(Self.read(text, chunk: chunk) == whole)
        #expect(!whole.joined().contains("ada.lovelace@analytical\""), "never a cut address: \(whole)")
    }
}
