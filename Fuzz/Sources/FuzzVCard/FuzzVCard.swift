import BirthdayBuzz
import FuzzSupport

/// The vCard reader fed in chunks, as `buzz import` feeds it (1 MiB at a time), but with
/// chunk sizes drawn from the input so every split point is tried: the first two bytes
/// seed the chunk sizes, the third picks small line and card limits (so the fuzzer
/// reaches them). The entries must be the same as when the whole input is fed at once,
/// when no line is over the line limit. (Over it, a line is cut where a chunk ends, and
/// an over-long line after a property that is not kept is not reported: the flag of the
/// previous property decides, issue 10 point 15. Those inputs are still read both ways,
/// for crashes and sanitizer reports.)
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard input.count >= 3 else { return 0 }
    var seed = UInt32(input[0]) << 8 | UInt32(input[1]) | 1

    let limits = input[2]
    let text = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[3...]))
    let maxLine = limits & 1 == 0 ? 1 << 20 : 16 + Int(limits >> 1)
    let maxCard = limits & 1 == 0 ? 4 << 20 : 64 + 4 * Int(limits >> 1)
    let today = LocalDate(year: 2027, month: 5, day: 10)

    var whole: [String] = []
    var reader = VCardReader(maxLineBytes: maxLine, maxCardBytes: maxCard)
    reader.today = today
    reader.feed(text) { whole.append(summary($0)) }
    reader.finish { whole.append(summary($0)) }

    var chunked: [String] = []
    var pieces = VCardReader(maxLineBytes: maxLine, maxCardBytes: maxCard)
    pieces.today = today
    var offset = 0
    while offset < text.count {
        seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5      // xorshift32
        let length = min(Int(seed % 64), text.count - offset)
        pieces.feed(UnsafeRawBufferPointer(rebasing: text[offset..<(offset + length)])) { chunked.append(summary($0)) }
        offset += length
    }
    pieces.finish { chunked.append(summary($0)) }

    var longest = 0, current = 0
    for byte in text {
        if byte == 0x0A || byte == 0x0D { longest = max(longest, current); current = 0 } else { current += 1 }
    }
    longest = max(longest, current)
    if longest <= maxLine, whole != chunked {
        fuzzFailure("chunked reading differs from whole:\n\(whole)\n---\n\(chunked)")
    }
    return 0
}

func summary(_ entry: ImportEntry) -> String {
    switch entry {
    case .card: String(describing: entry)
    case .skipped(let problem): "skipped card \(problem.cardNumber): \(problem.message)"
    }
}

@_cdecl("FuzzVCard_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(argc, argv, testOneInput)
}
