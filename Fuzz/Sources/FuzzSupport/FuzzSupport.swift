#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's entry point when the program has its own `main` (llvm.org/docs/LibFuzzer.html).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// Runs libFuzzer with the process's arguments, calling `testOneInput` for every input.
///
/// SwiftPM links an executable target's `<Target>_main` as the program's `main`; each
/// target defines it with `@_cdecl` and calls this.
public func runFuzzer(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                      _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}

/// The input as a buffer (libFuzzer may pass a null pointer for an empty input).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    guard let data, size > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
    return UnsafeBufferPointer(start: data, count: size)
}

/// Stops the run with a message: an invariant the target checks does not hold.
/// (libFuzzer saves the input as a crash.)
public func fuzzFailure(_ message: String) -> Never {
    let text = Array("fuzz invariant failed: \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}
