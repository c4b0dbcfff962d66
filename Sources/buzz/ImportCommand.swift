import ArgumentParser
import BirthdayBuzz
import BuzzStore
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import contacts from vCard files, vdir folders or a Google Contacts CSV export.",
        discussion: """
            Each file (or folder) is a source. Re-importing updates contacts in place and keeps your \
            decisions and hand-entered birthdays; --prune removes contacts that left the source. \
            A bad card is reported and skipped; the rest is imported.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "vCard files (.vcf), vdir folders, or Google Contacts CSV files.")
    var paths: [String]

    @Flag(help: "Remove contacts of these sources that are no longer in them.")
    var prune = false

    func run() throws {
        let context = try Context(root.global)
        // Check every input before writing anything: a wrong path changes nothing.
        var sources: [ContactSource] = []
        for source in try paths.map(ContactSource.init(path:))
        where !sources.contains(where: { $0.identifier == source.identifier }) {
            sources.append(source)
        }
        let store = try context.openStore()
        let progress = ImportProgress(totalBytes: sources.reduce(0) { $0 + $1.totalBytes })
        var problems = 0
        let summary = try runtime {
            try store.importSources(sources.map(\.identifier), prune: prune, now: context.now,
                                    includeByDefault: context.config.contacts.includeByDefault) { identifier, session in
                guard let source = sources.first(where: { $0.identifier == identifier }) else { return }
                try source.read(progress: progress) { file, entry in
                    switch entry {
                    case .card(_, let cardProblems):
                        for problem in cardProblems {
                            printWarning("\(file): \(problem); kept without a birthday")
                            problems += 1
                        }
                    case .skipped(let problem):
                        printWarning("\(file): \(problem); skipped")
                        problems += 1
                    }
                    try session.add(entry)
                }
            }
        }
        progress.finish()
        let names = sources.count <= 3 ? sources.map(\.displayName).joined(separator: ", ") : "\(sources.count) sources"
        print("imported \(names): \(summary.added) added, \(summary.updated) updated, \(summary.unchanged) unchanged, "
              + "\(summary.removed) removed, \(summary.skipped) skipped")
    }
}

/// Progress on a TTY, shown only once an import has run for more than a second.
final class ImportProgress {
    private let totalBytes: Int
    private var doneBytes = 0
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var shown = false
    private let enabled = isatty(STDERR_FILENO) == 1

    init(totalBytes: Int) {
        self.totalBytes = max(totalBytes, 1)
    }

    func advance(bytes: Int) {
        doneBytes += bytes
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(start) > 1, now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        shown = true
        let fraction = min(1, Double(doneBytes) / Double(totalBytes))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\rimporting [\(bar)] \(Int(fraction * 100))%".utf8))
    }

    func finish() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// An input of `import`: a vCard file, a vdir folder, or a Google Contacts CSV file.
struct ContactSource {
    enum Kind { case vcard, csv }

    /// The absolute path, which identifies the source in the store.
    let identifier: String
    let displayName: String
    /// Files to read, in order, with their kind.
    let files: [(path: String, kind: Kind)]
    let totalBytes: Int
    let isFolder: Bool

    /// Largest input file accepted.
    static let maxFileBytes = 2 << 30

    init(path: String) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        identifier = absolute
        displayName = path
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            throw CLIError.request("\(path): \(String(cString: strerror(errno)))")
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: absolute).sorted()
            } catch {
                throw CLIError.request("\(path): cannot list the folder (\(error.localizedDescription))")
            }
            var files: [(String, Kind)] = []
            var total = 0
            for name in names where name.lowercased().hasSuffix(".vcf") || name.lowercased().hasSuffix(".vcard") {
                let file = absolute + "/" + name
                var entry = stat()
                // vdir: regular files only; symlinks, FIFOs and devices are left alone.
                guard lstat(file, &entry) == 0, entry.st_mode & S_IFMT == S_IFREG else { continue }
                files.append((file, .vcard))
                total += Int(entry.st_size)
            }
            guard !files.isEmpty else {
                throw CLIError.request("\(path): the folder holds no .vcf files")
            }
            self.files = files
            totalBytes = total
            isFolder = true
            return
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CLIError.request("\(path): not a regular file or folder")
        }
        guard Int(info.st_size) <= ContactSource.maxFileBytes else {
            throw CLIError.request("\(path): larger than 2 GiB; split it")
        }
        files = [(absolute, try ContactSource.sniff(absolute, shown: path))]
        totalBytes = Int(info.st_size)
        isFolder = false
    }

    /// Tells vCard from Google CSV by the first bytes; anything else is refused.
    private static func sniff(_ path: String, shown: String) throws -> Kind {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError.request("\(shown): cannot read (\(String(cString: strerror(errno))))")
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 4096)) ?? Data()
        var bytes = [UInt8](head)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        let text = String(decoding: bytes, as: UTF8.self)
        let trimmed = text.drop(while: { $0.isWhitespace })
        if trimmed.isEmpty { return .vcard }  // an empty file: no cards, not an error
        if trimmed.uppercased().hasPrefix("BEGIN:VCARD") { return .vcard }
        let firstLine = String(trimmed.prefix(while: { $0 != "\n" && $0 != "\r" }))
        if GoogleContactsCSV.looksLikeHeader(firstLine) { return .csv }
        throw CLIError.request("\(shown): not a vCard file (no BEGIN:VCARD) nor a Google Contacts CSV export")
    }

    /// Streams every entry of every file to `body`.
    func read(progress: ImportProgress, _ body: (String, ImportEntry) throws -> Void) throws {
        for (path, kind) in files {
            let shown = !isFolder ? displayName : displayName + "/" + (path as NSString).lastPathComponent
            var failure: (any Error)?
            switch kind {
            case .vcard:
                // Inside a vdir, never follow a symlink that appeared after the listing.
                let descriptor = open(path, O_RDONLY | O_CLOEXEC | (isFolder ? O_NOFOLLOW : 0))
                guard descriptor >= 0 else {
                    throw CLIError.request("\(shown): cannot read (\(String(cString: strerror(errno))))")
                }
                defer { close(descriptor) }
                var reader = VCardReader()
                let chunkSize = 1 << 20
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
                defer { buffer.deallocate() }
                let emit: (ImportEntry) -> Void = { entry in
                    guard failure == nil else { return }
                    do { try body(shown, entry) } catch { failure = error }
                }
                while true {
                    let count = Foundation.read(descriptor, buffer.baseAddress, chunkSize)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw CLIError.runtime("\(shown): read failed (\(String(cString: strerror(errno))))")
                    }
                    if count == 0 { break }
                    reader.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]), emit)
                    progress.advance(bytes: count)
                    if let failure { throw failure }
                }
                reader.finish(emit)
            case .csv:
                let text: String
                do {
                    text = try String(contentsOfFile: path, encoding: .utf8)
                } catch {
                    throw CLIError.request("\(shown): not UTF-8 text (\(error.localizedDescription))")
                }
                do {
                    try GoogleContactsCSV.parse(text) { entry in
                        guard failure == nil else { return }
                        do { try body(shown, entry) } catch { failure = error }
                    }
                } catch let error as GoogleContactsCSV.Error {
                    throw CLIError.request("\(shown): \(error)")
                }
                progress.advance(bytes: text.utf8.count)
            }
            if let failure { throw failure }
        }
    }
}
