import ArgumentParser
import BirthdayBuzz
import BuzzSources
import BuzzStore
import Foundation

extension Context {
    /// What a source type may need from this process (paths resolve against the config's folder).
    func sourceContext(today: LocalDate? = nil, fromScratch: Bool = false) -> SourceContext {
        let environment = environment
        let configDirectory = BuzzDatabase.parentFolder(of: configPath)
        var context = SourceContext(environment: environment, configDirectory: configDirectory, scrubber: SecretScrubber(),
                                    today: today ?? self.today)
        context.fromScratch = fromScratch
        return context
    }

    /// The configured sources, or the ones named (in config order); an unknown name is a request error (2).
    func configuredSources(named names: [String] = [], today: LocalDate? = nil, fromScratch: Bool = false) throws -> [any ContactSourceType] {
        let known = config.sources.map(\.name)
        for name in names where !known.contains(name) {
            let list = known.isEmpty ? "none is configured; add a [sources.NAME] table (see config.example.toml)"
                : "configured: " + known.joined(separator: ", ")
            throw CLIError.request("no source named \"\(name)\" (\(list))")
        }
        let chosen = names.isEmpty ? config.sources : config.sources.filter { names.contains($0.name) }
        let registry = Context.sourceTypes
        let sourceContext = sourceContext(today: today, fromScratch: fromScratch)
        return try chosen.map { config in
            try sourceCall { try registry.make(config, context: sourceContext) }
        }
    }
}

extension SourceReport {
    /// `home: 3 added, 1 updated, 97 unchanged, 0 removed, 1 skipped`, or why it did not sync.
    var line: String {
        switch status {
        case .failed:
            return "\(label): not synced: \(reason ?? "unknown error"); its contacts are kept as they were"
        case .unchanged:
            return "\(label): unchanged since the last sync"
        case .synced:
            var text = "\(label): \(summary.added) added, \(summary.updated) updated, \(summary.unchanged) unchanged, "
                + "\(summary.removed) removed, \(summary.skipped) skipped"
            if summary.groups > 0 { text += ", \(summary.groups) group card(s) left out (not people)" }
            if summary.restored > 0 { text += ", \(summary.restored) came back with their decisions" }
            if let reason { text += "; not pruned: \(reason)" }
            return text
        }
    }

    /// Whether the store changed (a running daemon should plan again).
    var changedContacts: Bool {
        status == .synced && (summary.added + summary.updated + summary.removed + summary.restored) > 0
    }

    /// Warnings that go with the line: ids on more than one card, each once.
    var duplicateWarnings: [String] {
        summary.duplicates.map { "\(label): more than one card has the id \($0) (one UID, or the same name and email without one); the last one is kept" }
    }
}

/// Syncs `sources` one by one (each its own transaction), with a progress bar
/// on a TTY for one that takes more than a second; per-card problems go to `warn`.
func syncSources(_ sources: [any ContactSourceType], context: Context, store: BuzzDatabase, now: Int64? = nil,
                 onlyIfChanged: Bool, showProgress: Bool = true,
                 warn: (String) -> Void = printWarning) throws -> [SourceReport] {
    let syncer = SourceSync(store: store, now: now ?? context.now, includeByDefault: context.config.contacts.includeByDefault)
    var reports: [SourceReport] = []
    for source in sources {
        var progress: ImportProgress?
        let start = Date()
        let report = try runtime {
            try syncer.sync(source, onlyIfChanged: onlyIfChanged, warn: warn, progress: { bytes in
                guard showProgress else { return }
                if progress == nil { progress = ImportProgress(totalBytes: source.estimatedBytes(), label: "syncing \(source.label)",
                                                                start: start) }
                progress?.advance(bytes: bytes)
            })
        }
        progress?.finish()
        for warning in report.duplicateWarnings { warn(warning) }
        reports.append(report)
    }
    return reports
}

extension Context {
    /// When the contact's source writes back (`BirthdayWriteBack`, e.g. a carddav
    /// source with `write_back = true`), writes its birthday (nil: none) there now
    /// (docs/design/sources.md). The local decision is already recorded: a failure
    /// says so on one line and exits 1.
    func writeBirthdayBack(_ birthday: Birthday?, for contact: Contact, store: BuzzDatabase) throws {
        guard let config = config.sources.first(where: { $0.name == contact.source }) else { return }
        do {
            guard let source = try Context.sourceTypes.writeBack(config, context: sourceContext()) else { return }
            try source.writeBirthday(birthday, contactID: contact.id, store: store, now: now,
                                     includeByDefault: self.config.contacts.includeByDefault)
            print("\(contact.name): written back to \(config.name) on the server")
        } catch let error as SourceError {
            printError("\(contact.name): kept here, but not written to the server: \(config.name): \(error.message)")
            throw ExitCode(1)
        }
    }
}
