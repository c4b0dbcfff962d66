import BuzzSystem
import Foundation

/// Reads a text file the user names (the config, a template, a password file,
/// a CSV export) and says in a few words why it cannot: the system's reason
/// ("Permission denied"), "is a folder", or the line where the text stops
/// being UTF-8. Foundation's `String(contentsOfFile:)` says "The file isn't in
/// the correct format" for all of those, and cannot read `/dev/null`.
public enum TextFile {
    public struct Failure: Error, Sendable, Equatable {
        /// The 1-based line of an invalid UTF-8 sequence, else nil.
        public var line: Int?
        public var reason: String
    }

    /// The whole file as text. A leading byte-order mark is kept (callers that
    /// care strip it). Fails beyond `limit` bytes: a config read from
    /// `/dev/zero` by mistake must not eat the memory.
    public static func read(_ path: String, limit: Int = 16 << 20) throws(Failure) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(line: nil, reason: SystemError("open").reason) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw Failure(line: nil, reason: "is a folder, not a file")
        }
        var bytes: [UInt8] = []
        if info.st_mode & S_IFMT == S_IFREG { bytes.reserveCapacity(min(Int(info.st_size), limit)) }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(line: nil, reason: SystemError("read").reason)
            }
            if count == 0 { break }
            guard bytes.count + count <= limit else {
                throw Failure(line: nil, reason: "is larger than \(limit >> 20) MiB")
            }
            bytes.append(contentsOf: chunk[..<count])
        }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        // Not UTF-8: name the first bad line (a character never spans a line end).
        var line = 1
        for part in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if String(validating: part, as: UTF8.self) == nil { break }
            line += 1
        }
        throw Failure(line: line, reason: "is not UTF-8 text (save it as UTF-8)")
    }
}
