import ArgumentParser
import BirthdayBuzz
import BuzzSources
import BuzzStore
import Foundation

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Bring the configured contact sources ([sources.NAME]) up to date.",
        discussion: """
            Reads every source (or the ones named) as a whole: contacts gone from a source read completely are \
            removed, their decisions remembered in case they come back; a source that could not be read \
            completely removes nothing. With --full, a CardDAV source forgets its sync tokens and ETags and \
            lists and fetches every card again (for a server that lost track of its tokens). Exit 0: every source synced; 1: one could not be read (the others \
            still synced); 2: a config error or an unknown name.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "Source names (default: all of them).")
    var names: [String] = []

    @Flag(help: "JSON output: one object per source.")
    var json = false

    @Flag(help: "Read from scratch: list and fetch every card again instead of asking for what changed.")
    var full = false

    func run() throws {
        let context = try Context(root.global)
        let sources = try context.configuredSources(named: names, fromScratch: full)
        guard !sources.isEmpty else {
            if json { print(try CLIJSONEncoder.encode(SyncJSON(sources: []))) }
            printWarning("no contact sources configured; add a [sources.NAME] table (see config.example.toml), "
                         + "or import files once with `buzz import PATH`")
            return
        }
        let store = try context.openStore()
        let reports = try syncSources(sources, context: context, store: store, onlyIfChanged: false)
        if reports.contains(where: \.changedContacts) { notifyRunningDaemon(dataDirectory: context.dataDirectory) }
        if json {
            print(try CLIJSONEncoder.encode(SyncJSON(sources: reports.map(SyncJSON.Source.init))))
        } else {
            for report in reports { print(report.line) }
        }
        if reports.contains(where: { $0.status == .failed }) { throw ExitCode(1) }
    }
}

/// `sync --json` (docs/json.md, docs/sources.md): one object per source.
struct SyncJSON: Encodable {
    struct Source: Encodable {
        var name: String
        var type: String
        var status: String
        var added, updated, unchanged, removed, skipped, groups, restored: Int
        /// Ids of contacts that came more than once in the read.
        var duplicates: [String]
        var pruned: Bool
        var reason: String?

        init(_ report: SourceReport) {
            name = report.label
            type = report.typeName
            status = report.status.rawValue
            added = report.summary.added
            updated = report.summary.updated
            unchanged = report.summary.unchanged
            removed = report.summary.removed
            skipped = report.summary.skipped
            groups = report.summary.groups
            restored = report.summary.restored
            duplicates = report.summary.duplicates
            pruned = report.pruned
            reason = report.reason
        }
    }

    var sources: [Source]
}
