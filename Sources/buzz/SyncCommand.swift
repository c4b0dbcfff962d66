import ArgumentParser
import BirthdayBuzz
import BuzzSources
import Foundation

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Bring the configured contact sources ([sources.NAME]) up to date.",
        discussion: """
            Reads every source (or the ones named) as a whole: contacts gone from a source read completely are \
            removed, their decisions remembered in case they come back; a source that could not be read \
            completely removes nothing. Exit 0: every source synced; 1: one could not be read (the others \
            still synced); 2: a config error or an unknown name.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "Source names (default: all of them).")
    var names: [String] = []

    @Flag(help: "JSON output: one object per source.")
    var json = false

    func run() throws {
        let context = try Context(root.global)
        let sources = try context.configuredSources(named: names)
        guard !sources.isEmpty else {
            if json { print(#"{"sources":[]}"#) }
            printWarning("no contact sources configured; add a [sources.NAME] table (see config.example.toml), "
                         + "or import files once with `buzz import PATH`")
            return
        }
        let store = try context.openStore()
        let reports = try syncSources(sources, context: context, store: store, onlyIfChanged: false)
        if reports.contains(where: \.changedContacts) { notifyRunningDaemon(dataDirectory: context.dataDirectory) }
        if json {
            print(#"{"sources":["# + reports.map(\.json).joined(separator: ",") + "]}")
        } else {
            for report in reports { print(report.line) }
        }
        if reports.contains(where: { $0.status == .failed }) { throw ExitCode(1) }
    }
}
