import BirthdayBuzz
import BuzzStore
import Foundation

/// A place contacts come from: a vdir, a file, a CardDAV server (docs/design/sources.md).
///
/// One essential requirement, `read`; the rest is defaulted. A type is one
/// file (`VdirSource.swift`, `FileSource.swift`, `CardDAVSource.swift`) plus
/// one line in `SourceRegistry.standardTypes` (its options: `SourceType`).
///
/// ```swift
/// struct ExampleSource: ContactSourceType {
///     let id: String, label: String
///     var typeName: String { "example" }
///     func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
///               emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
///         for (href, card) in fetchAll() { try emit(href, .card(card, problems: [])) }
///         return SourceOutcome(coverage: .complete, state: newToken)
///     }
/// }
/// ```
public protocol ContactSourceType: Sendable {
    /// How the store names the source's contacts: the `[sources.NAME]` name,
    /// or a one-off import's absolute path.
    var id: String { get }
    /// How the user calls it: the name, or the path as given (`list --json`'s `"source"`).
    var label: String { get }
    /// The `type = "…"` it was built from (`sync --json`'s `"type"`).
    var typeName: String { get }

    /// Reads the source, on a reading thread of its own: every card goes to
    /// `emit` with the file (or href) it came from, and the outcome says how
    /// completely the source was read (only a complete read prunes) and what to
    /// keep for next time (`state`, handed back as `previousState`). `full`:
    /// a complete read is asked for (`buzz sync`, `run` at start); otherwise
    /// (`tick`, `run` after a change) a type may read only what changed since
    /// `previousState` and say which contacts went (`.changes(removed:)`), as
    /// a vdir does by file and CardDAV by sync token. Throwing
    /// writes nothing of this source. The sync's store transaction opens at
    /// the first `emit`: a type that waits for a server does all its waiting
    /// before it (so a slow server never keeps deliveries from the store). Errors are `SourceError`s: one line that
    /// names the source, never a secret.
    func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
              emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome

    /// A cheap summary of what the source holds now (file names, sizes, mtimes);
    /// nil when it cannot tell without reading. `tick` and `run` skip a source
    /// whose fingerprint equals the one stored at its last sync.
    func fingerprint() -> String?

    /// Whether `tick` should sync the source now, given what the store kept
    /// from its last sync. Default: a fingerprint that changed (or none).
    func isDue(last: SourceState?, now: Int64) -> Bool

    /// When `run` should sync the source next by the clock alone (a CardDAV
    /// source: its last sync + `interval`), or nil: only when its files change.
    /// Local sources return nil, so a daemon with only those sets no timer for them.
    func nextSync(after last: SourceState?) -> Int64?

    /// Seconds between syncs by the clock (a CardDAV source's `interval`), or
    /// nil for a source synced when its files change. A source with one that
    /// fails is tried again with backoff, up to this long (`SyncRetry`); a
    /// local one is tried again when it changes.
    var syncInterval: Int? { get }

    /// Local paths whose changes `run` watches with inotify; empty for a
    /// remote source (which `run` syncs on its own interval instead).
    var watchedPaths: [String] { get }

    /// Bytes a read will go through, for the progress bar (0: unknown).
    func estimatedBytes() -> Int

    /// What `buzz doctor` says of the source, without reading its cards: one
    /// line when it can be read (a folder with its files, a server that lists
    /// its books); a `SourceError` that says why not.
    func check() throws -> String
}

extension ContactSourceType {
    public func fingerprint() -> String? { nil }
    public var watchedPaths: [String] { [] }
    public func nextSync(after last: SourceState?) -> Int64? { nil }
    public var syncInterval: Int? { nil }
    public func estimatedBytes() -> Int { 0 }
    public func check() throws -> String { "\(label): nothing to check for a \(typeName) source" }

    public func isDue(last: SourceState?, now: Int64) -> Bool {
        guard let last, let stored = last.fingerprint, let current = fingerprint() else { return true }
        return stored != current
    }
}

/// What every source may need from the process that builds it.
public struct SourceContext: Sendable {
    /// For `~/` in paths and the secret rules (`password_env`).
    public var environment: [String: String]
    /// Folder of the config file: relative paths resolve against it.
    public var configDirectory: String?
    /// Every resolved secret is registered here so that no output shows it.
    public var scrubber: SecretScrubber
    /// Birthdays after this day are reported and dropped (the command's `--now`).
    public var today: LocalDate?
    /// Read from scratch: what was kept from the last sync (a CardDAV
    /// source's sync tokens and ETags) is not trusted, every card is listed
    /// and fetched again, and what is gone is pruned (`buzz sync --full`).
    public var fromScratch = false

    public init(environment: [String: String], configDirectory: String?, scrubber: SecretScrubber = SecretScrubber(),
                today: LocalDate? = nil) {
        self.environment = environment
        self.configDirectory = configDirectory
        self.scrubber = scrubber
        self.today = today
    }

    /// A path from the config, with `~/` expanded and relative paths read from
    /// the config folder; normalized (no `.`/`..`, no trailing slash).
    public func resolvePath(_ path: String) -> String {
        var resolved = path
        if path == "~" || path.hasPrefix("~/"), let home = environment["HOME"] {
            resolved = home + path.dropFirst(1)
        } else if !path.hasPrefix("/") {
            resolved = (configDirectory.map { $0 + "/" } ?? FileManager.default.currentDirectoryPath + "/") + path
        }
        return URL(fileURLWithPath: resolved).standardizedFileURL.path
    }
}
