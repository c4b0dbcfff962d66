import BirthdayBuzz
import BuzzStore
import BuzzTestKit
import Foundation
import Testing

/// What `buzz list --json --now DAY` lists for a sandbox, worked out in this
/// process by the calls `list` itself makes: the sandbox's config, the store's
/// contacts, the buzzed ones (`isIncluded`), `ListEntry.entries` for the kinds
/// the config reminds of. Tests that check another output (status, the
/// calendar) against the list use it as their oracle, day after day, without
/// starting `buzz` for each day; the output under test still comes from `buzz`.
enum LibraryList {
    static func entries(_ sandbox: Sandbox, now day: String,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> [ListEntry] {
        let today = try #require(LocalDate(iso: day), "not a date: \(day)", sourceLocation: sourceLocation)
        let text = (try? String(contentsOfFile: sandbox.configPath, encoding: .utf8)) ?? ""
        let utc = TimeZone(identifier: "UTC") ?? .current
        // No channel or source tables in these configs: no types to check them against.
        let config = try BuzzConfig(toml: text, file: sandbox.configPath, environment: sandbox.environment,
                                    systemTimeZone: utc, types: ConfigTypes(channels: [], sources: []))
        let store = try BuzzDatabase(directory: sandbox.dataDir)
        let buzzed = try store.allContacts().filter(\.isIncluded)
        let kinds = OccasionKind.all.filter { config.reminds($0) }
        return ListEntry.entries(buzzed, today: today, feb29: config.reminders.feb29, kinds: kinds)
    }
}
