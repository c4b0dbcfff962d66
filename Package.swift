// swift-tools-version:6.1
import PackageDescription

// Arrows point one way: buzz → BuzzStore → BirthdayBuzz. The core library
// (BirthdayBuzz) does no I/O beyond reading bytes it is handed.
let package = Package(
    name: "BirthdayBuzz",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "buzz", targets: ["buzz"]),
        .library(name: "BirthdayBuzz", targets: ["BirthdayBuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(
            name: "BirthdayBuzz",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        .target(
            name: "BuzzStore",
            dependencies: [
                "BirthdayBuzz",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "buzz",
            dependencies: [
                "BirthdayBuzz",
                "BuzzStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: []
        ),
        .testTarget(name: "BirthdayBuzzTests", dependencies: ["BirthdayBuzz"]),
        .testTarget(name: "BuzzStoreTests", dependencies: ["BuzzStore", "BirthdayBuzz"]),
        .testTarget(name: "BuzzCLITests", dependencies: ["BirthdayBuzz", "buzz"]),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
