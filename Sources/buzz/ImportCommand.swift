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
        for var source in try paths.map(ContactSource.init(path:))
        where !sources.contains(where: { $0.identifier == source.identifier }) {
            source.today = context.today
            sources.append(source)
        }
        let store = try context.openStore()
        let progress = ImportProgress(totalBytes: sources.reduce(0) { $0 + $1.totalBytes })
        let summary = try runtime {
            try store.importSources(sources.map(\.identifier), prune: prune, now: context.now,
                                    includeByDefault: context.config.contacts.includeByDefault) { identifier, session in
                guard let source = sources.first(where: { $0.identifier == identifier }) else { return }
                // A card is a few hundred bytes; the cap bounds the guess for photo-laden files.
                session.expectCards(min(source.totalBytes / 256, 1 << 18))
                // Two cores, two stages: a thread reads and parses cards while this
                // one prepares their column values and writes them to the database
                // (parsing is the heavier stage, so preparing sits on this side).
                let pipe = EntryPipe()
                let reader = Thread { source.produce(into: pipe) }
                reader.start()
                do {
                    while let (items, bytes) = try pipe.take() {
                        for item in items {
                            switch item.entry {
                            case .card(let card, let cardProblems):
                                for problem in cardProblems { printWarning("\(item.file): \(problem); kept without a birthday") }
                                try session.add(card: card)
                            case .skipped(let problem):
                                printWarning("\(item.file): \(problem); skipped")
                                session.skip(problem)
                            }
                        }
                        progress.advance(bytes: bytes)
                        pipe.giveBack(items)
                    }
                } catch {
                    pipe.cancel()
                    throw error
                }
            }
        }
        progress.finish()
        notifyRunningDaemon(dataDirectory: context.dataDirectory)
        for identifier in summary.unpruned {
            let shown = sources.first { $0.identifier == identifier }?.displayName ?? identifier
            printWarning("\(shown): not pruned: something above that could not be read may be one of its contacts; "
                         + "fix it and import again with --prune")
        }
        let names = sources.count <= 3 ? sources.map(\.displayName).joined(separator: ", ") : "\(sources.count) sources"
        print("imported \(names): \(summary.added) added, \(summary.updated) updated, \(summary.unchanged) unchanged, "
              + "\(summary.removed) removed, \(summary.skipped) skipped"
              + (summary.groups > 0 ? ", \(summary.groups) group card(s) left out (not people)" : ""))
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
    /// Birthdays after this day are reported and dropped (the import's `--now`).
    var today: LocalDate?

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

    /// Reads every file into `pipe` in batches; runs on the reading thread and
    /// always ends the pipe.
    func produce(into pipe: EntryPipe) {
        var batch: [EntryPipe.Item] = []
        var bytes = 0
        batch.reserveCapacity(EntryPipe.batchSize)
        do {
            try read(bytesRead: { bytes += $0 }) { file, entry in
                batch.append(EntryPipe.Item(file: file, entry: entry))
                if batch.count == EntryPipe.batchSize {
                    guard pipe.put(&batch, bytes: bytes) else { throw CancellationError() }
                    bytes = 0
                }
            }
            _ = pipe.put(&batch, bytes: bytes)
            pipe.finish(error: nil)
        } catch {
            pipe.finish(error: error)
        }
    }

    /// Streams every entry of every file to `body`.
    func read(bytesRead: (Int) -> Void, _ body: (String, ImportEntry) throws -> Void) throws {
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
                reader.today = today
                let chunkSize = 1 << 20
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
                defer { buffer.deallocate() }
                var entries = 0
                var sawText = false
                func emit(_ entry: ImportEntry) {
                    entries += 1
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
                    if !sawText, entries == 0 {
                        sawText = buffer[..<count].contains { !(0x09...0x0D).contains($0) && $0 != 0x20 }
                    }
                    reader.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]), emit)
                    bytesRead(count)
                    if let failure { throw failure }
                }
                reader.finish(emit)
                // A file with no card at all (empty, or cut off before BEGIN:VCARD by a
                // sync in progress) is reported: it may have held contacts that
                // --prune would otherwise remove.
                if entries == 0 {
                    emit(.skipped(CardProblem(cardNumber: 0, message: sawText ? "holds no vCard (no BEGIN:VCARD)" : "is empty")))
                }
            case .csv:
                let text: String
                do {
                    text = try TextFile.read(path, limit: 1 << 30)
                } catch {
                    if let line = error.line { throw CLIError.request("\(shown):\(line): the file \(error.reason)") }
                    throw CLIError.request("\(shown): cannot read the file (\(error.reason))")
                }
                do {
                    try GoogleContactsCSV.parse(text, today: today) { entry in
                        guard failure == nil else { return }
                        do { try body(shown, entry) } catch { failure = error }
                    }
                } catch let error as GoogleContactsCSV.Error {
                    throw CLIError.request("\(shown): \(error)")
                }
                bytesRead(text.utf8.count)
            }
            if let failure { throw failure }
        }
    }
}

/// Hands batches of parsed entries from the reading thread to the writing one,
/// holding at most a few batches so memory stays bounded.
///
/// `@unchecked Sendable`: every stored property is read and written only while
/// `condition` is locked.
final class EntryPipe: @unchecked Sendable {
    struct Item: Sendable {
        var file: String
        var entry: ImportEntry
    }

    static let batchSize = 128
    private static let capacity = 4

    private let condition = NSCondition()
    private var queue: [(items: [Item], bytes: Int)] = []
    /// Batches the writer is done with, going back to the reading thread: the
    /// cards are freed on the thread that allocated them (glibc's malloc then
    /// frees into that thread's own arena, instead of the writer taking the
    /// reader's arena lock for every string), and the batch buffer is reused.
    private var returned: [[Item]] = []
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?

    /// Adds the batch, waiting while the pipe is full; false once the reader
    /// cancelled. `items` comes back empty (a returned batch, emptied here on
    /// the caller's thread, or a new one), ready for the next cards.
    func put(_ items: inout [Item], bytes: Int) -> Bool {
        condition.lock()
        while queue.count >= EntryPipe.capacity, !cancelled { condition.wait() }
        if cancelled {
            condition.unlock()
            return false
        }
        var full = returned.popLast() ?? []
        swap(&items, &full)
        queue.append((full, bytes))
        condition.broadcast()
        condition.unlock()
        items.removeAll(keepingCapacity: true)
        if items.capacity < EntryPipe.batchSize { items.reserveCapacity(EntryPipe.batchSize) }
        return true
    }

    /// Hands a processed batch back to the reading thread (see `returned`).
    func giveBack(_ items: [Item]) {
        condition.lock()
        if returned.count <= EntryPipe.capacity { returned.append(items) }
        condition.unlock()
    }

    /// Ends the stream, with the error that stopped it if any.
    func finish(error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch; nil at the end; throws what stopped the producer.
    func take() throws -> ([Item], Int)? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty, !finished { condition.wait() }
        if !queue.isEmpty {
            let next = queue.removeFirst()
            condition.broadcast()
            return (next.items, next.bytes)
        }
        if let failure { throw failure }
        return nil
    }

    /// The consumer gave up: release a producer waiting for room.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
