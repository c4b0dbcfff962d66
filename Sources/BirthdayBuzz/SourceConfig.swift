import Foundation

/// A `[sources.NAME]` table (DESIGN §3a): where contacts come from, kept in step by `sync`,
/// `tick` and `run`. Each type's keys live in a file of their own (`VdirSourceConfig.swift`,
/// `FileSourceConfig.swift`); adding a type is one options file here, one line in
/// `SourceConfig.parsers`, and one source file plus one registry line in BuzzSources.
public struct SourceConfig: Sendable {
    /// The table's name: how the store, `sync NAME` and `list --json` call the source.
    public var name: String
    /// The type's own keys, parsed and checked.
    public var options: any SourceOptions

    public init(name: String, options: any SourceOptions) {
        self.name = name
        self.options = options
    }

    public var typeName: String { type(of: options).typeName }

    /// Every source type's parser, by `type = "…"`.
    static let parsers: [String: @Sendable (TableReader) throws -> any SourceOptions] = [
        VdirSourceOptions.typeName: VdirSourceOptions.init(table:),
        FileSourceOptions.typeName: FileSourceOptions.init(table:),
        CardDAVSourceOptions.typeName: CardDAVSourceOptions.init(table:),
    ]

    public static var typeNames: [String] { parsers.keys.sorted() }

    /// A source name is a plain word, so it can never be mistaken for the path
    /// of a one-off `import` (which the store names by its absolute path).
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        } && !name.hasPrefix(".")
    }

    init(name: String, table: TableReader) throws {
        guard SourceConfig.isValidName(name) else {
            throw SchemaProblem(path: table.path, message: "a source name is letters, digits, '-', '_' and '.', not \"\(name)\"")
        }
        let known = SourceConfig.typeNames.joined(separator: ", ")
        guard let type = try table.string("type") else { throw table.problem("type", "missing (one of: \(known))") }
        guard let parse = SourceConfig.parsers[type] else {
            throw table.problem("type", "unknown source type \"\(type)\" (one of: \(known))")
        }
        self.name = name
        options = try parse(table)
        try table.finish()
    }
}

/// The keys of one source type. `Sendable`: configs cross into the daemon's tasks.
public protocol SourceOptions: Sendable {
    /// The `type = "…"` value that selects these options.
    static var typeName: String { get }
}
