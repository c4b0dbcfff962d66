// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for BirthdayBuzz's parsers (issue 10). A package of its own, so
// that `swift build` and `swift test` at the top never see them: they only build with
// `-sanitize=fuzzer`, through `scripts/fuzz.sh TARGET SECONDS`.
let fuzzTargets = ["FuzzVCard", "FuzzCSV", "FuzzConfig", "FuzzTemplates", "FuzzCardDAV", "FuzzNameDays"]

let package = Package(
    name: "BirthdayBuzzFuzz",
    platforms: [.macOS(.v15)],
    products: fuzzTargets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [.package(name: "BirthdayBuzz", path: "..")],
    targets: [
        // LLVMFuzzerRunDriver and the glue every target shares.
        .target(name: "FuzzSupport"),
    ] + fuzzTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: ["FuzzSupport", .product(name: "BirthdayBuzz", package: "BirthdayBuzz")]
                // The config target loads with the shipped channel and source types, so
                // their option parsing (in their adapters) is fuzzed too.
                + (name == "FuzzConfig" ? [.product(name: "BuzzChannels", package: "BirthdayBuzz"),
                                           .product(name: "BuzzSources", package: "BirthdayBuzz")] : [])
                // hrefs and multistatus replies, through the CardDAV client's own resolver and checks.
                + (name == "FuzzCardDAV" ? [.product(name: "BuzzCardDAV", package: "BirthdayBuzz")] : []),
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    }
)
