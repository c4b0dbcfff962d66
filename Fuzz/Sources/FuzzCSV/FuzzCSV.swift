import BirthdayBuzz
import FuzzSupport

/// The Google Contacts CSV reader on any UTF-8 text (`buzz import` reads the file as
/// UTF-8 first and stops on anything else).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let text = String(validating: fuzzInput(data, size), as: UTF8.self) else { return 0 }
    var entries = 0
    do {
        try GoogleContactsCSV.parse(text, today: LocalDate(year: 2027, month: 5, day: 10)) { _ in entries += 1 }
    } catch {
        _ = String(describing: error)
    }
    return 0
}

@_cdecl("FuzzCSV_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(argc, argv, testOneInput)
}
