import BirthdayBuzz

/// One source type: the `type = "…"` it answers to, the options it reads from
/// its `[sources.NAME]` table, and how it builds the reader.
///
/// A type is one file (`VdirSource.swift`, `FileSource.swift`,
/// `CardDAVSource.swift`) plus one line in `SourceRegistry.standardTypes`. The
/// core reads `type`; the type reads the rest when the config is loaded, so a
/// bad option is a config error with its `file:line`.
public protocol SourceType: Sendable {
    /// The type's own keys, parsed and checked.
    associatedtype Options: Sendable

    /// The `type = "…"` value.
    static var typeName: String { get }

    /// Reads the type's keys; a key it does not read is reported as unknown.
    static func options(from table: TableReader) throws -> Options

    /// The reader for a table whose options have been read.
    static func make(_ config: SourceConfig, options: Options, context: SourceContext) throws -> any ContactSourceType
}

extension SourceType {
    /// Reads a source table's options (all of them: an unread key is an error).
    public static func options(of config: SourceConfig) throws -> Options {
        try TableReader.readAll(config.options, options(from:))
    }
}

/// Maps a source `type` to the code that reads it. Adding a type is one file
/// plus one line in `standardTypes`.
public struct SourceRegistry: Sendable {
    struct Entry: Sendable {
        var name: String
        var check: @Sendable (TableReader) throws -> Void
        var make: @Sendable (SourceConfig, SourceContext) throws -> any ContactSourceType
    }

    private var entries: [Entry] = []

    /// The types BirthdayBuzz ships.
    public static let standardTypes: [any SourceType.Type] = [VdirSource.self, FileSource.self, CardDAVSource.self]

    public init(types: [any SourceType.Type] = SourceRegistry.standardTypes) {
        for type in types { register(type) }
    }

    /// Adds a type, or replaces the one with the same `typeName`.
    public mutating func register<T: SourceType>(_ type: T.Type) {
        let entry = Entry(name: T.typeName,
                          check: { table in _ = try T.options(from: table) },
                          make: { config, context in try T.make(config, options: try T.options(of: config), context: context) })
        if let index = entries.firstIndex(where: { $0.name == T.typeName }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
    }

    /// What `BuzzConfig(toml:…types:)` needs to check `[sources.NAME]` tables.
    public var configTypes: [ConfigTypes.Entry] {
        entries.map { ConfigTypes.Entry(name: $0.name, check: $0.check) }
    }

    /// Builds the reader for a `[sources.NAME]` table.
    public func make(_ config: SourceConfig, context: SourceContext) throws -> any ContactSourceType {
        guard let entry = entries.first(where: { $0.name == config.typeName }) else {
            throw SourceError.request("sources.\(config.name): no reader for source type \"\(config.typeName)\"")
        }
        var scoped = context
        scoped.scrubber = context.scrubber.scoped(to: "sources." + config.name)
        do {
            return try entry.make(config, scoped)
        } catch let error as ConfigError {
            // Options are checked when the config loads; this is a table made in code.
            throw SourceError.request("sources.\(config.name): \(error.message)")
        }
    }

    /// The source of a `[sources.NAME]` table as a writer of birthdays, when its
    /// type adopts `BirthdayWriteBack` and the table asks for it (`writesBack`);
    /// nil for a read-only source. Building a source reads nothing (a carddav
    /// source connects when it is used).
    public func writeBack(_ config: SourceConfig, context: SourceContext) throws -> (any BirthdayWriteBack)? {
        guard let source = try make(config, context: context) as? any BirthdayWriteBack, source.writesBack else { return nil }
        return source
    }
}
