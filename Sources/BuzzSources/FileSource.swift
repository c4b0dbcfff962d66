import BirthdayBuzz
import BuzzStore
import BuzzSystem
import Foundation

/// `type = "file"`: one `.vcf` file of many cards, or a Google Contacts CSV
/// export. A missing or unreadable file fails the sync (nothing pruned); an
/// empty one is reported and prunes nothing (a writer may be halfway).
public struct FileSource: ContactSourceType {
    public let id: String
    public let label: String
    public var typeName: String { Self.typeName }
    /// The file, resolved.
    public let path: String
    /// The path as written in the config (or on the command line), for messages.
    public let shownPath: String
    public let today: LocalDate?

    public init(id: String, label: String, path: String, shownPath: String, today: LocalDate?) {
        self.id = id
        self.label = label
        self.path = path
        self.shownPath = shownPath
        self.today = today
    }

    public static func make(_ config: SourceConfig, options: FileSourceOptions, context: SourceContext) throws -> any ContactSourceType {
        FileSource(id: config.name, label: config.name, path: context.resolvePath(options.path),
                          shownPath: options.path, today: context.today)
    }

    public func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
                     emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
        var files = try CardFiles(file: path, shown: shownPath)
        files.today = today
        // A file cut off inside a card was not read completely: nothing of it is pruned.
        let incomplete = try files.read(bytesRead: bytesRead, emit)
        return SourceOutcome(coverage: incomplete.map { .incomplete(reason: $0) } ?? .complete, fingerprint: files.fingerprint)
    }

    public func fingerprint() -> String? { (try? CardFiles(file: path, shown: shownPath))?.fingerprint }

    /// The file's folder: editors and exporters write a new file and rename it
    /// over the old one, which a watch on the file itself would miss.
    public var watchedPaths: [String] { [path] }

    public func estimatedBytes() -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    public func check() throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw SourceError.runtime("\(path): \(SystemError("stat").reason)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw SourceError.runtime("\(path): not a file") }
        guard access(path, R_OK) == 0 else { throw SourceError.runtime("\(path): \(SystemError("access").reason)") }
        return "\(path): \(info.st_size) bytes"
    }
}

extension FileSource: SourceType {
    public static let typeName = "file"

    public static func options(from table: TableReader) throws -> FileSourceOptions {
        guard let path = try table.string("path"), !path.isEmpty else {
            throw table.problem("path", "missing: a .vcf file or a Google Contacts CSV export")
        }
        return FileSourceOptions(path: path)
    }
}

/// `type = "file"`'s one key: `path`.
public struct FileSourceOptions: Sendable, Equatable {
    /// As written in the config (`~/` and relative paths are resolved by the source).
    public var path: String

    public init(path: String) {
        self.path = path
    }
}
