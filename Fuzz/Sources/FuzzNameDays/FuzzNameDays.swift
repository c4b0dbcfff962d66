import BirthdayBuzz
import FuzzSupport

/// The name-day calendar reader (`[namedays] file`) on any UTF-8 text, then a
/// lookup of a few given names (with accents, several words, none) in what it made.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let text = String(validating: fuzzInput(data, size), as: UTF8.self),
          let prepare = OccasionKind.nameday.prepare else { return 0 }
    let prepared: any Sendable
    do {
        prepared = try prepare(text)
    } catch {
        _ = String(describing: error)
        return 0
    }
    for name in ["Ábel", "anna maria", "", "Zoë", String(text.prefix(12))] {
        let contact = PlanningContact(id: "x", name: name, firstName: name, birthday: nil)
        OccasionKind.nameday.dates(contact, prepared) { _, date in _ = date.description }
    }
    return 0
}

@_cdecl("FuzzNameDays_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(argc, argv, testOneInput)
}
