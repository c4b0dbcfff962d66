/// `type = "file"`: one `.vcf` file (many cards) or a Google Contacts CSV export.
public struct FileSourceOptions: SourceOptions, Equatable {
    public static let typeName = "file"

    /// As written in the config (`~/` and relative paths are resolved by the source).
    public var path: String

    public init(path: String) {
        self.path = path
    }

    init(table: TableReader) throws {
        guard let path = try table.string("path"), !path.isEmpty else {
            throw table.problem("path", "missing: a .vcf file or a Google Contacts CSV export")
        }
        self.init(path: path)
    }
}
