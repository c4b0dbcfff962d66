import Foundation

/// A `[sources.NAME]` table (docs/design/sources.md): where contacts come from, kept in step by `sync`,
/// `tick` and `run`. The core keeps its name and `type`; the type's own keys are read
/// and checked by that type, in BuzzSources (one file per type, and `SourceRegistry`).
public struct SourceConfig: Sendable {
    /// The table's name: how the store, `sync NAME` and `list --json` call the source.
    public var name: String
    /// The `type = "…"` value: which reader the source has.
    public var typeName: String
    /// The table's other keys, already checked by the type when the config was loaded.
    public var options: ConfigTable

    public init(name: String, typeName: String, options: ConfigTable? = nil) {
        self.name = name
        self.typeName = typeName
        self.options = options ?? ConfigTable(path: ["sources", name])
    }

    /// A source name is a plain word, so it can never be mistaken for the path
    /// of a one-off `import` (which the store names by its absolute path).
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        } && !name.hasPrefix(".")
    }

    init(name: String, table: TableReader, types: [ConfigTypes.Entry]) throws {
        guard SourceConfig.isValidName(name) else {
            throw SchemaProblem(path: table.path, message: "a source name is letters, digits, '-', '_' and '.', not \"\(name)\"")
        }
        let known = types.map(\.name).sorted().joined(separator: ", ")
        guard let type = try table.string("type") else { throw table.problem("type", "missing (one of: \(known))") }
        self.name = name
        typeName = type
        options = try ConfigTypes.checkedOptions(table, type: type, among: types, what: "source", known: known)
    }
}
