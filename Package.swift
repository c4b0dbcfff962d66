// swift-tools-version:6.1
import PackageDescription

// Where libdbus-1-dev puts its headers (what `pkg-config --cflags dbus-1` says on
// Debian; pkgConfig on CDBus would also link the library, which LibDBus.swift loads
// itself). Only BuzzChannels gets them: it imports CDBus with `internal import`, so
// neither its clients nor the tests that `@testable import` it load CDBus (checked by
// building), and the other targets carry no unsafe flags.
#if arch(arm64)
let multiarch = "aarch64-linux-gnu"
#else
let multiarch = "x86_64-linux-gnu"
#endif
let dbusHeaders = ["-Xcc", "-I/usr/include/dbus-1.0", "-Xcc", "-I/usr/lib/\(multiarch)/dbus-1.0/include"]

// Arrows point one way: buzz → BuzzSources → BuzzStore → BirthdayBuzz. The core library
// (BirthdayBuzz) does no I/O beyond reading bytes it is handed.
let package = Package(
    name: "BirthdayBuzz",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "buzz", targets: ["buzz"]),
        .library(name: "BirthdayBuzz", targets: ["BirthdayBuzz"]),
        // The shipped channel and source types, for programs (and Fuzz/) that load configs as buzz does.
        .library(name: "BuzzChannels", targets: ["BuzzChannels"]),
        .library(name: "BuzzSources", targets: ["BuzzSources"]),
        // The CardDAV client, for Fuzz/ (its href resolution and reply checks).
        .library(name: "BuzzCardDAV", targets: ["BuzzCardDAV"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "BirthdayBuzz",
            dependencies: [
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // `ShippedTemplates.all` from templates/*/*.mustache, `ExampleConfig.text` from config.example.toml.
            plugins: ["EmbedTemplates"]
        ),
        .plugin(name: "EmbedTemplates", capability: .buildTool()),
        // Reading the user's files for the core (TextFile: config, password
        // files, CSV; TemplateFolders: template overrides), which takes texts.
        .target(name: "BuzzFiles", dependencies: ["BirthdayBuzz", "BuzzSystem"]),
        // System libraries: libcurl4-openssl-dev and libdbus-1-dev on Debian.
        // Headers only: neither is linked. CurlSupport loads libcurl.so.4
        // (CurlLibrary.swift) and BuzzChannels loads libdbus-1.so.3 (LibDBus.swift)
        // with dlopen when a channel first needs them, so commands that do not
        // (list, import, a webhook send…) skip mapping ~40 shared libraries.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CDBus", providers: [.apt(["libdbus-1-dev"])]),
        // The glibc and Swift-runtime calls Swift cannot reach by itself: the one C boundary
        // besides the two library shims.
        .target(name: "CBuzzLinux"),
        // What talks to the system from Swift: SystemError, the dlopen'd SharedLibrary,
        // and PollLoop / PollThread (the one poll(2) loop).
        .target(name: "BuzzSystem", dependencies: ["CBuzzLinux"]),
        // Starting programs (`ProgramRunner`: posix_spawn, own process group, a
        // minimal environment) and reading the secrets a config names (`SecretReader`:
        // password_env, password_file, password_command), for channels and sources alike.
        .target(name: "BuzzProcess", dependencies: ["BirthdayBuzz", "BuzzFiles", "BuzzSystem", "CBuzzLinux"]),
        // The one owner of libcurl.
        .target(name: "CurlSupport", dependencies: ["CCurl", "BuzzSystem"]),
        // One file per channel adapter, plus the registry.
        .target(
            name: "BuzzChannels",
            dependencies: [
                "BirthdayBuzz", "BuzzProcess", "CurlSupport", "CDBus", "BuzzSystem", "CBuzzLinux",
            ],
            swiftSettings: [.unsafeFlags(dbusHeaders)]
        ),
        // The CardDAV client (RFC 6352/6578/6764) the carddav source plugs in.
        .target(name: "BuzzCardDAV", dependencies: ["BirthdayBuzz", "CurlSupport", "BuzzSystem"]),
        // Times BuzzCardDAV alone for Benchmarks/run-carddav-bench.sh (which also times `buzz sync`).
        .executableTarget(name: "carddav-bench", dependencies: ["BuzzCardDAV", "BirthdayBuzz"],
                          path: "Benchmarks/CardDAVBench"),
        // A recording channel, a fixed clock and the conformance suite every adapter runs.
        .target(name: "BuzzTestKit", dependencies: ["BirthdayBuzz", "BuzzCommands"], resources: [.copy("Resources/python_starter.py")]),
        .target(
            name: "BuzzStore",
            dependencies: [
                "BirthdayBuzz",
                "BuzzSystem",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The import pipeline (read, upsert, prune) shared by import, sync, tick
        // and run; one file per source type, plus the registry.
        .target(
            name: "BuzzSources",
            dependencies: ["BirthdayBuzz", "BuzzFiles", "BuzzProcess", "BuzzStore", "BuzzCardDAV", "CurlSupport", "BuzzSystem", "CBuzzLinux"]
        ),
        // The daemon's machinery: its loop, wall-clock timer, executor, signals
        // and its services in one ServiceGroup. What a pass does is handed in.
        .target(
            name: "BuzzDaemon",
            dependencies: [
                "BirthdayBuzz",
                "BuzzSystem",
                "CBuzzLinux",
                "CurlSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The commands and the wiring (the daemon's rounds among them): a library,
        // so that tests and other programs use it without the executable (issue 12).
        .target(
            name: "BuzzCommands",
            dependencies: [
                "BirthdayBuzz",
                "BuzzDaemon",
                "BuzzFiles",
                "BuzzStore",
                "BuzzSources",
                "BuzzChannels",
                "BuzzProcess",
                "CurlSupport",
                "CBuzzLinux",
                "BuzzSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // `buildCommit` for `buzz --version`.
            plugins: ["BuildInfo"]
        ),
        .plugin(name: "BuildInfo", capability: .buildTool()),
        .executableTarget(
            name: "buzz",
            dependencies: ["BuzzCommands"],
            // Start-up cost, paid by every command (docs/install.md, "Start-up time"; docs/design/decisions.md): the
            // release binary exports no dynamic symbols (nothing loads plugins into
            // it). Linking it at a fixed address (-no-pie, which saves ~2.5 ms of
            // relocations per start) is safe only with --static-swift-stdlib: with
            // the shared Swift runtime, glibc's loader warns "direct reference to
            // protected function … may break pointer equality" on every run. A
            // manifest cannot see --static-swift-stdlib, so the static build
            // commands (docs/install.md, Benchmarks/lib.sh) pass -no-pie themselves.
            linkerSettings: [
                .unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release)),
            ]
        ),
        // The loader is tested with the shipped channel and source types (their options live in their adapters).
        .testTarget(name: "BirthdayBuzzTests", dependencies: ["BirthdayBuzz", "BuzzFiles", "BuzzTestKit", "BuzzChannels", "BuzzSources"]),
        .testTarget(name: "BuzzChannelsTests", dependencies: ["BuzzChannels", "BuzzProcess", "BirthdayBuzz", "BuzzTestKit", "CurlSupport", "BuzzCommands",
                                                           "BuzzDaemon", "BuzzSystem"],
                    resources: [.copy("Servers")]),
        .testTarget(name: "BuzzStoreTests", dependencies: ["BuzzStore", "BirthdayBuzz", "BuzzTestKit", .product(name: "GRDB", package: "GRDB.swift")]),
        // The CardDAV client, and the carddav source end to end (`buzz sync`, `tick`,
        // write-back), against a real Radicale: one target, one copy of its harness.
        .testTarget(name: "BuzzCardDAVTests",
                    dependencies: ["BuzzCardDAV", "BuzzSources", "BuzzStore", "BirthdayBuzz", "BuzzTestKit", "CurlSupport"],
                    resources: [.copy("Servers")]),
        // BuzzStore: the list that some tests check other outputs against, read in process (LibraryList.swift).
        .testTarget(name: "BuzzCLITests", dependencies: ["BirthdayBuzz", "BuzzStore", "BuzzTestKit"]),
    ]
)

for target in package.targets where target.type != .system && target.type != .plugin && target.name != "CBuzzLinux" {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
