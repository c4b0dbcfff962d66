import BirthdayBuzz
import BuzzFiles
import BuzzSystem
import Foundation

/// The files a local source reads, in order, and the reading itself: vCard
/// files streamed in 1 MiB chunks (photos dropped as they pass), Google CSV
/// exports read whole. Shared by the `vdir` and `file` types and by one-off imports.
struct CardFiles: Sendable {
    enum Kind: Sendable { case vcard, csv }

    /// How files are named in warnings: the path as the user wrote it.
    let displayName: String
    /// Files to read, with their kind and the name shown for them.
    private(set) var files: [(path: String, kind: Kind, shown: String)]
    let totalBytes: Int
    /// Each file's size, mtime and inode as listed (`signature(_:)`), by path.
    private(set) var signatures: [String: String] = [:]
    /// Sub-folders read (relative to the folder), in order.
    private(set) var folders: [String] = []
    /// Read from a folder: never follow a symlink that appeared after the listing.
    let isFolder: Bool
    /// A file of a folder that cannot be opened: an error (`import`), or a
    /// skipped entry that withholds pruning (a configured source: the others are read).
    let strict: Bool
    /// Birthdays after this day are reported and dropped (the command's `--now`).
    var today: LocalDate?

    /// Largest input file accepted.
    static let maxFileBytes = 2 << 30

    /// One file, a vCard or a Google CSV export (told apart by its first bytes).
    init(file absolute: String, shown: String) throws {
        displayName = shown
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            throw SourceError.request("\(shown): \(SystemError("stat").reason)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SourceError.request("\(shown): not a regular file")
        }
        guard Int(info.st_size) <= CardFiles.maxFileBytes else {
            throw SourceError.request("\(shown): larger than 2 GiB; split it")
        }
        files = [(absolute, try CardFiles.sniff(absolute, shown: shown), shown)]
        totalBytes = Int(info.st_size)
        signatures[absolute] = CardFiles.signature(info)
        isFolder = false
        strict = true
    }

    /// The `.vcf` files of a vdir folder; with `recursive`, of each sub-folder
    /// too (one level: vdirsyncer's root, Radicale's `collection-root/USER/`).
    /// Hidden entries (Radicale's `.Radicale.cache`, editors' temp files) are left out.
    init(folder absolute: String, shown: String, recursive: Bool, strict: Bool) throws {
        displayName = shown
        self.strict = strict
        isFolder = true
        var found: [(String, Kind, String)] = []
        var signatures: [String: String] = [:]
        var folders: [String] = []
        var total = 0
        func list(_ folder: String, prefix: String, descend: Bool) throws {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            } catch {
                throw SourceError.request("\(shown)\(prefix.isEmpty ? "" : "/" + prefix): cannot list the folder (\(CardFiles.reason(error)))")
            }
            for name in names where !name.hasPrefix(".") {
                let file = folder + "/" + name
                var entry = stat()
                // vdir: regular files only; symlinks, FIFOs and devices are left alone.
                guard lstat(file, &entry) == 0 else { continue }
                let type = entry.st_mode & S_IFMT
                if type == S_IFDIR, descend {
                    folders.append(name)
                    try list(file, prefix: name, descend: false)
                    continue
                }
                let lower = name.lowercased()
                guard type == S_IFREG, lower.hasSuffix(".vcf") || lower.hasSuffix(".vcard") else { continue }
                found.append((file, .vcard, shown + "/" + (prefix.isEmpty ? name : prefix + "/" + name)))
                total += Int(entry.st_size)
                signatures[file] = CardFiles.signature(entry)
            }
        }
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            throw SourceError.request("\(shown): \(SystemError("stat").reason)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw SourceError.request("\(shown): not a folder") }
        try list(absolute, prefix: "", descend: recursive)
        files = found
        self.signatures = signatures
        self.folders = folders
        totalBytes = total
    }

    private static func reason(_ error: any Error) -> String {
        if let cocoa = error as? CocoaError, let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? NSError,
           underlying.domain == NSPOSIXErrorDomain {
            return SystemError("read", errno: Int32(underlying.code)).reason
        }
        return error.localizedDescription
    }

    /// Tells vCard from Google CSV by the first bytes; anything else is refused.
    static func sniff(_ path: String, shown: String) throws -> Kind {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw SourceError.request("\(shown): cannot read (\(SystemError("open").reason))")
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
        throw SourceError.request("\(shown): not a vCard file (no BEGIN:VCARD) nor a Google Contacts CSV export")
    }

    /// The same folder listing with only `subset` of its files.
    func only(_ subset: [(path: String, kind: Kind, shown: String)]) -> CardFiles {
        var copy = self
        copy.files = subset
        return copy
    }

    /// One file's size, mtime and inode: equal means unchanged (a rename-write gives a new inode).
    static func signature(_ info: stat) -> String {
        "\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ino)"
    }

    /// A summary of the listing: every file's path and signature, and the
    /// sub-folders (a new empty address book is a change too).
    var fingerprint: String {
        var hasher = FNV64()
        for file in files {
            hasher.add(file.path)
            hasher.add(signatures[file.path] ?? "")
        }
        for folder in folders { hasher.add("/" + folder) }
        return String(hasher.value, radix: 16)
    }

    /// Streams every entry of every file to `body`; returns the first reason
    /// the read was incomplete (a file that could not be opened in a tolerant
    /// read), or nil.
    @discardableResult
    func read(bytesRead: (Int) -> Void, _ body: (String, ImportEntry) throws -> Void) throws -> String? {
        var incomplete: String?
        for (path, kind, shown) in files {
            var failure: (any Error)?
            switch kind {
            case .vcard:
                // Inside a vdir, never follow a symlink that appeared after the listing.
                let descriptor = open(path, O_RDONLY | O_CLOEXEC | (isFolder ? O_NOFOLLOW : 0))
                guard descriptor >= 0 else {
                    let reason = SystemError("open").reason
                    // A file renamed away between listing and reading (a sync in
                    // progress) is gone, not unreadable.
                    if errno == ENOENT, isFolder, !strict { continue }
                    if strict { throw SourceError.request("\(shown): cannot read (\(reason))") }
                    try body(shown, .skipped(CardProblem(cardNumber: 0, message: "cannot read (\(reason))")))
                    if incomplete == nil { incomplete = "\(shown) could not be read (\(reason))" }
                    continue
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
                        throw SourceError.runtime("\(shown): read failed (\(SystemError("read").reason))")
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
                // Cut off inside a card: cards after the cut may be missing, so nothing may be pruned.
                if reader.endedInsideCard, incomplete == nil { incomplete = "\(shown) ends inside a card (cut off before END:VCARD)" }
                // A file with no card at all (empty, or cut off before BEGIN:VCARD by a
                // sync in progress) is reported: it may have held contacts that
                // pruning would otherwise remove.
                if entries == 0 {
                    emit(.skipped(CardProblem(cardNumber: 0, message: sawText ? "holds no vCard (no BEGIN:VCARD)" : "is empty")))
                }
            case .csv:
                let text: String
                do {
                    text = try TextFile.read(path, limit: 1 << 30)
                } catch {
                    if let line = error.line { throw SourceError.request("\(shown):\(line): the file \(error.reason)") }
                    throw SourceError.request("\(shown): cannot read the file (\(error.reason))")
                }
                do {
                    try GoogleContactsCSV.parse(text, today: today) { entry in
                        guard failure == nil else { return }
                        do { try body(shown, entry) } catch { failure = error }
                    }
                } catch let error as GoogleContactsCSV.Error {
                    throw SourceError.request("\(shown): \(error)")
                }
                bytesRead(text.utf8.count)
            }
            if let failure { throw failure }
        }
        return incomplete
    }
}

/// 64-bit FNV-1a over strings, for change detection only.
struct FNV64 {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
        value ^= 0xFF
        value &*= 0x100_0000_01b3
    }
}
