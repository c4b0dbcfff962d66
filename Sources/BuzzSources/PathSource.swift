import BirthdayBuzz
import BuzzStore
import BuzzSystem
import Foundation

/// An input of a one-off `buzz import PATH`: a vCard file, a vdir folder, or a
/// Google CSV export, named in the store by its absolute path and shown as
/// given. Stricter than a configured source: anything that cannot be read
/// stops the import before it writes (exit 2).
public struct PathSource: ContactSourceType {
    public let id: String
    public let label: String
    public var typeName: String { files.isFolder ? VdirSource.typeName : FileSource.typeName }
    let files: CardFiles

    /// Checks the path now: a missing file, an empty folder or a file that is
    /// not a vCard or Google CSV is an error before anything is written. A
    /// relative `path` starts from `directory` (the working directory when nil);
    /// messages show it as given.
    public init(path: String, today: LocalDate?, directory: String? = nil) throws {
        let base = directory.map { URL(fileURLWithPath: $0, isDirectory: true) }
        let absolute = URL(fileURLWithPath: path, relativeTo: path.hasPrefix("/") ? nil : base).standardizedFileURL.path
        id = absolute
        label = path
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            throw SourceError.request("\(path): \(SystemError("stat").reason)")
        }
        var files: CardFiles
        if info.st_mode & S_IFMT == S_IFDIR {
            files = try CardFiles(folder: absolute, shown: path, recursive: false, strict: true)
            guard !files.files.isEmpty else { throw SourceError.request("\(path): the folder holds no .vcf files") }
        } else {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw SourceError.request("\(path): not a regular file or folder")
            }
            files = try CardFiles(file: absolute, shown: path)
        }
        files.today = today
        self.files = files
    }

    public func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
                     emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
        try files.read(bytesRead: bytesRead, emit)
        return SourceOutcome(coverage: .complete)
    }

    public func estimatedBytes() -> Int { files.totalBytes }
}
