import BirthdayBuzz
import Synchronization
import BuzzTestKit
import Foundation
import Testing
@testable import BuzzChannels

/// The shared conformance suite, run by the adapters whose tests live elsewhere
/// in this target too (webhook and smtp run it in their own suites).
@Suite(.serialized, .timeLimit(.minutes(1))) struct ConformanceTests {
    @Test(.enabled(if: ServerGate.allows(.exec), "needs /bin/sh"))
    func exec() async throws {
        let sandbox = try ExecChannelTests.Sandbox()
        let log = sandbox.path("titles.log")
        // The plugin records each message's title, one per line (python parses the JSON).
        let plugin = try sandbox.script("record", """
            exec \(ServerGate.python) -c 'import json,sys; m=json.load(sys.stdin); open(sys.argv[1],"a").write(m["title"]+"\\n")' "$1"
            """)
        let channel = sandbox.channel([plugin, log])
        try await ChannelConformance.run(channel, recipient: .phone("+15550100")) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }
    }

    @Test func console() async throws {
        let printed = PrintedText()
        let channel = ConsoleChannel(name: "console") { printed.append($0) }
        try await ChannelConformance.run(channel) {
            printed.text.split(separator: "\n").filter { $0.hasPrefix("🎂 ") }.map { line in
                var title = String(line.dropFirst(2))
                if let to = title.range(of: " (to ") { title = String(title[..<to.lowerBound]) }
                return title
            }
        }
    }

    @Test(.enabled(if: ServerGate.allows(.dbus), "needs dbus-daemon and python3-dbusmock"))
    func dbus() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let channel = DBusChannel(name: "desktop", options: DBusChannel.Options(), timeout: 10, environment: bus.environment)
        try await ChannelConformance.run(channel) {
            // dbusmock logs: Notify "BirthdayBuzz" 0 "icon" "SUMMARY" "BODY" … — a summary may
            // itself hold quotes, so look for each sample title in its position.
            let calls = try bus.log().split(separator: "\n").filter { $0.contains(" Notify ") }
            return ChannelConformance.sampleMessages().map(\.title).flatMap { title in
                calls.filter { $0.contains("\"x-office-calendar\" \"\(title)\" ") }.map { _ in title }
            }
        }
    }
}

/// Text a console channel printed (the channel runs on any thread).
final class PrintedText: Sendable {
    private let storage = Mutex("")

    func append(_ text: String) { storage.withLock { $0 += text } }

    var text: String { storage.withLock { $0 } }
}
