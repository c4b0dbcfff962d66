import BirthdayBuzz
import BuzzStore
import Foundation

/// `type = "vdir"`: a folder of `.vcf` files (khard, vdirsyncer, Radicale's
/// own collection folders); with `recursive`, each sub-folder is an address
/// book and `.vcf` files directly in the folder form one more.
///
/// A file that cannot be opened is reported and the read is incomplete (nothing
/// is pruned); a folder that does not exist fails the sync; an empty folder is
/// an address book emptied on purpose, and prunes.
public struct VdirSource: ContactSourceType {
    public let id: String
    public let label: String
    public var typeName: String { VdirSourceOptions.typeName }
    /// The folder, resolved.
    public let path: String
    /// The path as written in the config, for messages.
    public let shownPath: String
    public let recursive: Bool
    public let today: LocalDate?

    public init(id: String, label: String, path: String, shownPath: String, recursive: Bool, today: LocalDate?) {
        self.id = id
        self.label = label
        self.path = path
        self.shownPath = shownPath
        self.recursive = recursive
        self.today = today
    }

    static func make(_ config: SourceConfig, _ context: SourceContext) throws -> any ContactSourceType {
        let options = try SourceRegistry.options(config, as: VdirSourceOptions.self)
        return VdirSource(id: config.name, label: config.name, path: context.resolvePath(options.path),
                          shownPath: options.path, recursive: options.recursive, today: context.today)
    }

    func files() throws -> CardFiles {
        var files = try CardFiles(folder: path, shown: shownPath, recursive: recursive, strict: false)
        files.today = today
        return files
    }

    public func read(previousState: String?, bytesRead: (Int) -> Void,
                     emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
        let files = try files()
        if let incomplete = try files.read(bytesRead: bytesRead, emit) {
            return SourceOutcome(coverage: .incomplete(reason: incomplete))
        }
        return SourceOutcome(coverage: .complete)
    }

    /// Names, sizes, change times and inodes of the folder's files (and of the
    /// sub-folders themselves, so a new empty book counts as a change).
    public func fingerprint() -> String? {
        guard let files = try? files() else { return nil }
        var paths = files.files.map(\.path)
        if recursive { paths.append(contentsOf: subfolders()) }
        return CardFiles.fingerprint(of: [path] + paths)
    }

    /// The folder and, with `recursive`, its sub-folders; `run` also watches the
    /// folder above, to see the whole folder replaced.
    public var watchedPaths: [String] { [path] + (recursive ? subfolders() : []) }

    public func estimatedBytes() -> Int { (try? files().totalBytes) ?? 0 }

    private func subfolders() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path).sorted()) ?? []
        return names.compactMap { name in
            guard !name.hasPrefix(".") else { return nil }
            var info = stat()
            let full = path + "/" + name
            return lstat(full, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR ? full : nil
        }
    }
}
