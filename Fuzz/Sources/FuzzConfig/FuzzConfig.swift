import BirthdayBuzz
import BuzzChannels
import BuzzSources
import Foundation
import FuzzSupport

/// The config loader on any UTF-8 text, as `buzz` reads config.toml: it must load or
/// throw a `ConfigError` (one line), never abort (toml++'s assertions, issue 10).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let text = String(validating: fuzzInput(data, size), as: UTF8.self) else { return 0 }
    do {
        _ = try BuzzConfig(toml: text, file: "config.toml", environment: ["HOME": "/home/fuzz", "LANG": "de_DE.UTF-8"],
                           systemTimeZone: utc, types: types)
    } catch {
        let line = error.description
        if line.contains("\n") || line.contains("\r") { fuzzFailure("a config error on two lines: \(line)") }
    }
    return 0
}

let utc = TimeZone(identifier: "UTC") ?? .current

/// The shipped channel and source types, as `buzz` hands them to the loader: each
/// type's own option parsing (in its adapter's file) is fuzzed with the rest.
let types = ConfigTypes(channels: ChannelRegistry().configTypes, sources: SourceRegistry().configTypes)

@_cdecl("FuzzConfig_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(argc, argv, testOneInput)
}
