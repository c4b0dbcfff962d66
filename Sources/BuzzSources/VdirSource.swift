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
    public var typeName: String { Self.typeName }
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

    public static func make(_ config: SourceConfig, options: VdirSourceOptions, context: SourceContext) throws -> any ContactSourceType {
        VdirSource(id: config.name, label: config.name, path: context.resolvePath(options.path),
                          shownPath: options.path, recursive: options.recursive, today: context.today)
    }

    func files() throws -> CardFiles {
        var files = try CardFiles(folder: path, shown: shownPath, recursive: recursive, strict: false)
        files.today = today
        return files
    }

    /// A full read lists and reads every file (and prunes what is gone). Otherwise,
    /// with the state of the last read, only files whose size, mtime or inode
    /// changed are read, and the contacts of files that are gone (or no longer
    /// hold them) are removed; a file that could not be read keeps its contacts
    /// and is read again next time.
    public func read(previousState: String?, full: Bool, bytesRead: (Int) -> Void,
                     emit: (String, ImportEntry) throws -> Void) throws -> SourceOutcome {
        let files = try files()
        let previous = full ? nil : previousState.flatMap(VdirState.decode)
        var state = VdirState()
        var toRead = files
        if let previous {
            var changed: [(path: String, kind: CardFiles.Kind, shown: String)] = []
            for file in files.files {
                let relative = relativePath(file.path)
                if let old = previous.files[relative], old.signature == files.signatures[file.path] {
                    state.files[relative] = old
                } else {
                    changed.append(file)
                }
            }
            toRead = files.only(changed)
        }
        // What each file read holds: ids, and whether something in it named none.
        var held: [String: (signature: String, ids: [String], broken: Bool)] = [:]
        for file in toRead.files {
            held[relativePath(file.path)] = (files.signatures[file.path] ?? "", [], false)
        }
        let prefix = shownPath.count + 1
        let incomplete = try toRead.read(bytesRead: bytesRead) { shown, entry in
            let relative = String(shown.dropFirst(prefix))
            switch entry {
            case .card(let card, _): held[relative]?.ids.append(card.id)
            case .skipped(let problem):
                if let uid = problem.uid { held[relative]?.ids.append(uid) } else { held[relative]?.broken = true }
            }
            try emit(shown, entry)
        }
        for (relative, file) in held {
            var ids = file.ids
            var signature = file.signature
            if file.broken {
                // Cut off or unreadable: it may still hold what it held; read it again next time.
                ids += previous?.files[relative]?.ids ?? []
                signature = ""
            }
            state.files[relative] = VdirState.File(signature: signature, ids: ids)
        }
        let fingerprint = files.fingerprint  // as listed, before reading: a change while reading is seen next time
        guard let previous else {
            if let incomplete {
                return SourceOutcome(coverage: .incomplete(reason: incomplete), fingerprint: fingerprint, state: state.encoded)
            }
            return SourceOutcome(coverage: .complete, fingerprint: fingerprint, state: state.encoded)
        }
        var kept = Set<String>()
        for file in state.files.values { kept.formUnion(file.ids) }
        var removed = Set<String>()
        for file in previous.files.values { for id in file.ids where !kept.contains(id) { removed.insert(id) } }
        return SourceOutcome(coverage: .changes(removed: removed.sorted()), fingerprint: fingerprint, state: state.encoded)
    }

    private func relativePath(_ file: String) -> String {
        String(file.dropFirst(path.count + 1))
    }

    /// Names, sizes, change times and inodes of the folder's files, and its
    /// sub-folders (so a new empty book counts as a change).
    public func fingerprint() -> String? {
        (try? files())?.fingerprint
    }

    /// The folder and, with `recursive`, its sub-folders; `run` also watches the
    /// folder above, to see the whole folder replaced.
    public var watchedPaths: [String] { [path] + (recursive ? subfolders() : []) }

    public func estimatedBytes() -> Int { (try? files().totalBytes) ?? 0 }

    public func check() throws -> String {
        let files = try files()
        let cards = files.files.count
        guard cards > 0 else { return "\(shownPath): no .vcf files (yet)" }
        return "\(shownPath): \(cards) .vcf file\(cards == 1 ? "" : "s")"
    }

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

/// What a vdir read last found in each file (its path below the folder): its
/// signature (size, mtime, inode; empty: read it again) and the contact ids it held.
struct VdirState: Codable {
    struct File: Codable {
        var signature: String
        var ids: [String]

        enum CodingKeys: String, CodingKey {
            case signature = "s"
            case ids = "i"
        }
    }

    var version = 1
    var files: [String: File] = [:]

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case files = "f"
    }

    static func decode(_ text: String) -> VdirState? {
        guard let state = try? JSONDecoder().decode(VdirState.self, from: Data(text.utf8)), state.version == 1 else { return nil }
        return state
    }

    var encoded: String? {
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension VdirSource: SourceType {
    public static let typeName = "vdir"

    public static func options(from table: TableReader) throws -> VdirSourceOptions {
        guard let path = try table.string("path"), !path.isEmpty else {
            throw table.problem("path", "missing: the folder of .vcf files, e.g. \"~/.contacts/personal\"")
        }
        return VdirSourceOptions(path: path, recursive: try table.bool("recursive") ?? false)
    }
}

/// `type = "vdir"`'s keys: `path` and `recursive`.
public struct VdirSourceOptions: Sendable, Equatable {
    /// As written in the config (`~/` and relative paths are resolved by the source).
    public var path: String
    /// Each sub-folder is an address book too (a vdirsyncer root, Radicale's
    /// `collection-root/USER/`); `.vcf` files directly in `path` form one more.
    public var recursive: Bool

    public init(path: String, recursive: Bool = false) {
        self.path = path
        self.recursive = recursive
    }
}
