/// `type = "vdir"`: a folder of `.vcf` files, one card per file, as khard,
/// vdirsyncer and Radicale keep them.
public struct VdirSourceOptions: SourceOptions, Equatable {
    public static let typeName = "vdir"

    /// As written in the config (`~/` and relative paths are resolved by the source).
    public var path: String
    /// Each sub-folder is an address book too (a vdirsyncer root, Radicale's
    /// `collection-root/USER/`); `.vcf` files directly in `path` form one more.
    public var recursive: Bool

    public init(path: String, recursive: Bool = false) {
        self.path = path
        self.recursive = recursive
    }

    init(table: TableReader) throws {
        guard let path = try table.string("path"), !path.isEmpty else {
            throw table.problem("path", "missing: the folder of .vcf files, e.g. \"~/.contacts/personal\"")
        }
        self.init(path: path, recursive: try table.bool("recursive") ?? false)
    }
}
