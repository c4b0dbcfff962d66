import BuzzStore
import BuzzSystem
import Foundation

/// Whole-file writes for the commands that write files (`export ics`, `init`).
enum AtomicFile {
    /// Writes `text` through a temporary file (created with `mode`) and a
    /// rename, so a reader never sees half a file; a failure is a one-line
    /// runtime error that names `what` and the cause. Without `makingFolder`
    /// the folder must exist (`export ics --output`: a typo creates nothing, as
    /// `curl -o`); with it the folder is made (`[export] ics`, `init`).
    ///
    /// Not `Data.write(options: .atomic)`: its failures read "The operation
    /// could not be completed", and the mode would be set only after the text
    /// is on disk. A relative `path` starts from the invocation's directory and
    /// is shown as given.
    static func write(_ text: String, to given: String, what: String, mode: mode_t, makingFolder: Bool = false) throws {
        let path = Invocation.current.absolute(given)
        let folder = BuzzDatabase.parentFolder(of: path)
        let givenFolder = BuzzDatabase.parentFolder(of: given)
        let shown = givenFolder.isEmpty ? "." : givenFolder
        var info = stat()
        if makingFolder, !folder.isEmpty, stat(folder, &info) != 0 {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        guard stat(folder.isEmpty ? "." : folder, &info) == 0 else {
            throw CLIError.runtime("\(given): cannot write \(what) (\(shown): \(SystemError("stat").reason))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CLIError.runtime("\(given): cannot write \(what) (\(shown) is not a folder)")
        }
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw CLIError.runtime("\(given): cannot write \(what) (it is a folder; name a file)")
        }
        let temporary = (folder.isEmpty ? "" : folder + "/") + ".buzz-\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw CLIError.runtime("\(given): cannot write \(what) (\(SystemError("open").reason))")
        }
        var failure: Int32 = 0
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += count
            }
        }
        if close(fd) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw CLIError.runtime("\(given): cannot write \(what) (\(SystemError("write", errno: failure).reason))")
        }
    }
}
