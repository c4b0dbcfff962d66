import ArgumentParser
import BirthdayBuzz
import BuzzSources
import BuzzStore
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import contacts from vCard files, vdir folders or a Google Contacts CSV export.",
        discussion: """
            Each file (or folder) is a source. Re-importing updates contacts in place and keeps your \
            decisions and hand-entered birthdays; --prune removes contacts that left the source. \
            A bad card is reported and skipped; the rest is imported.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "vCard files (.vcf), vdir folders, or Google Contacts CSV files.")
    var paths: [String]

    @Flag(help: "Remove contacts of these sources that are no longer in them.")
    var prune = false

    func run() throws {
        let context = try Context(root.global)
        // Check every input before writing anything: a wrong path changes nothing.
        var sources: [PathSource] = []
        for source in try paths.map({ path in try sourceCall { try PathSource(path: path, today: context.today, directory: Invocation.current.directory) } })
        where !sources.contains(where: { $0.id == source.id }) {
            sources.append(source)
        }
        let store = try context.openStore()
        // What only a debug log says (an unknown TZ on a card): on standard error at BUZZ_LOG_LEVEL=debug, as `run` logs it.
        let debugging = ["debug", "trace"].contains(context.environment["BUZZ_LOG_LEVEL"]?.lowercased() ?? "")
        let debugLine: (String) -> Void = { line in if debugging { printWarning("debug: " + line) } }
        let progress = ImportProgress(totalBytes: sources.reduce(0) { $0 + $1.estimatedBytes() })
        var labels: [String: String] = [:]
        for source in sources { labels[source.id] = source.label }
        let summary = try runtime {
            try store.importSources(sources.map(\.id), labels: labels, prune: prune, now: context.now,
                                    includeByDefault: context.config.contacts.includeByDefault) { identifier, session in
                guard let source = sources.first(where: { $0.id == identifier }) else { return }
                // A card is a few hundred bytes; the cap bounds the guess for photo-laden files.
                session.expectCards(min(source.estimatedBytes() / 256, 1 << 18))
                _ = try sourceCall {
                    try SourceSync.pump(into: session, warn: printWarning, debug: debugLine,
                                        progress: progress.advance(bytes:)) { bytesRead, emit in
                        try source.read(previousState: nil, full: true, bytesRead: bytesRead, emit: emit)
                    }
                }
            }
        }
        progress.finish()
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        for identifier in summary.unpruned {
            let shown = sources.first { $0.id == identifier }?.label ?? identifier
            printWarning("\(shown): not pruned: something above that could not be read may be one of its contacts; "
                         + "fix it and import again with --prune")
        }
        for id in summary.duplicates {
            printWarning("more than one card has the id \(id) (one UID, or the same name and email without one); the last one is kept")
        }
        let names = sources.count <= 3 ? sources.map(\.label).joined(separator: ", ") : "\(sources.count) sources"
        print("imported \(names): \(summary.added) added, \(summary.updated) updated, \(summary.unchanged) unchanged, "
              + "\(summary.removed) removed, \(summary.skipped) skipped"
              + (summary.groups > 0 ? ", \(summary.groups) group card(s) left out (not people)" : ""))
    }
}

/// Runs `body`, turning a source's error into the CLI's (a wrong input: 2; a failed read: 1).
func sourceCall<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as SourceError {
        throw error.kind == .request ? CLIError.request(error.message) : CLIError.runtime(error.message)
    }
}

/// Progress on a TTY, shown only once an import or sync has run for more than a second.
final class ImportProgress {
    private let totalBytes: Int
    private let label: String
    private var doneBytes = 0
    private let start: Date
    private var lastDraw = Date.distantPast
    private var shown = false
    private let invocation = Invocation.current
    private var enabled: Bool { invocation.errorIsTerminal }

    /// `start`: when the wait began (the bar shows once it passes a second).
    init(totalBytes: Int, label: String = "importing", start: Date = Date()) {
        self.totalBytes = max(totalBytes, 1)
        self.label = label
        self.start = start
    }

    func advance(bytes: Int) {
        doneBytes += bytes
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(start) > 1, now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        shown = true
        let fraction = min(1, Double(doneBytes) / Double(totalBytes))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        invocation.writeError("\r\(label) [\(bar)] \(Int(fraction * 100))%")
    }

    func finish() {
        if shown { invocation.writeError("\r\u{1B}[K") }
    }
}
