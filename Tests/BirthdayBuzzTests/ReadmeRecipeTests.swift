import Foundation
import Testing
@testable import BirthdayBuzz

/// The "Never miss one" recipes (docs/delivery-and-daemon.md, moved there from
/// the README) load as configs, so the page cannot drift from what the loader takes.
@Suite struct ReadmeRecipeTests {
    static func recipes() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/delivery-and-daemon.md"), encoding: .utf8)
        guard let start = page.range(of: "\n## Never miss one\n") else { return [] }
        let rest = page[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var blocks: [String] = []
        var current: [Substring]?
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```toml" {
                current = []
            } else if let lines = current, line == "```" {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test func everyRecipeLoads() throws {
        let blocks = try Self.recipes()
        #expect(blocks.count >= 3, "the section and its TOML recipes are there")
        for block in blocks {
            let config = try BuzzConfig(toml: block, file: "docs/delivery-and-daemon.md", environment: ["BUZZ_NTFY_URL": "https://ntfy.example/t"],
                                        systemTimeZone: TimeZone(identifier: "UTC")!, types: .shipped)
            if block.contains("fallback") { #expect(config.reminders.fallback == ["phone"]) }
            if block.contains("[health]") { #expect(config.health?.ping == .environment("BUZZ_HC_URL")) }
            if block.contains("[digests.weekly]") { #expect(config.digests.map(\.name) == ["weekly"]) }
        }
    }
}
