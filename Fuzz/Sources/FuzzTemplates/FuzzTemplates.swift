import BirthdayBuzz
import FuzzSupport

/// A message template as a user's override: loaded (checked and compiled), then rendered.
/// The first byte picks the kind (reminder or ask); the rest is the file's text. Also
/// checks, for every other input, that the text cut into short pieces renders as the
/// whole (`ChunkedTemplate`).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard input.count >= 1, let text = String(validating: input[1...], as: UTF8.self) else { return 0 }
    let reminder = input[0] & 1 == 0
    // Compiled in pieces, a template renders what it renders whole (short texts: the
    // whole is compiled by swift-mustache's quadratic parser). The first byte also says
    // whether to check that (every other input: it is most of the time spent) and how
    // short the pieces are.
    let chunkLength = 1 + Int(input[0] >> 2) % 24
    if input[0] & 2 == 0, text.utf8.count <= 512,
       !MessageTemplates.piecesRenderAsWhole(text, kind: reminder ? .reminder : .ask, chunkLength: chunkLength) {
        fuzzFailure("cut into pieces of \(chunkLength), the template renders differently: \(text.debugDescription)")
    }
    // Only this template and a trivial one of the other kind (every kind needs English).
    let shipped = reminder ? ["en/reminder": text, "en/ask": "Hi\n\nHey\n"] : ["en/reminder": "T\n\nB\n", "en/ask": text]
    let templates: MessageTemplates
    do {
        templates = try MessageTemplates(shipped: shipped)
    } catch {
        if error.description.contains("\n") { fuzzFailure("a template error on two lines: \(error)") }
        return 0
    }
    guard let date = LocalDate(year: 2027, month: 3, day: 15) else { return 0 }
    if reminder {
        for (days, age) in [(0, 37), (5, nil)] as [(Int, Int?)] {
            _ = templates.renderReminder(name: "Ann O'Brien", firstName: "Ann", daysUntil: days, age: age,
                                         date: date, locale: "en")
        }
    } else {
        _ = templates.renderAsk(firstName: "Ann", name: "Ann <O'Brien>", senderName: "Sam", locales: ["en"])
        _ = templates.renderAsk(firstName: "", name: "", senderName: nil, locales: ["de-AT"])
    }
    return 0
}

@_cdecl("FuzzTemplates_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(argc, argv, testOneInput)
}
