@_spi(Fuzzing) import BuzzCardDAV
import FuzzSupport

/// What a CardDAV server's answer goes through: an href (the input's first
/// line) resolved against a fixed book URL, and a multistatus body (the rest)
/// parsed and checked member by member. `CardDAVReplyFuzzing.run` traps when
/// an invariant breaks (a resolved URL that does not parse back to itself,
/// dot segments left, a member outside the book or listed twice).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = fuzzInput(data, size)
    let newline = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
    let href = String(decoding: bytes[..<newline], as: UTF8.self)
    let body = newline < bytes.endIndex ? Array(bytes[(newline + 1)...]) : []
    CardDAVReplyFuzzing.run(href: href, body: body)
    return 0
}

@_cdecl("FuzzCardDAV_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(argc, argv, testOneInput)
}
