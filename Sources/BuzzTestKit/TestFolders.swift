import Foundation

/// Where the tests make their folders (sandboxes, stores, servers' files).
public enum TestFolders {
    /// `$TMPDIR` when it is set; else `/dev/shm` when it is a folder we can write
    /// with 1 GiB free (a tmpfs: nothing goes to disk, and the fsyncs of SQLite's
    /// checkpoints, one per store a command closes, cost nothing: about a tenth of
    /// the suite's time on this project's 2-core machine; a container's default
    /// 64 MiB one is too small); else the system's temporary folder.
    public static let temporary: URL = {
        if ProcessInfo.processInfo.environment["TMPDIR"]?.isEmpty == false { return FileManager.default.temporaryDirectory }
        var space = statvfs()
        if access("/dev/shm", W_OK | X_OK) == 0, statvfs("/dev/shm", &space) == 0,
           UInt64(space.f_bavail) * UInt64(space.f_frsize) >= 1 << 30 {
            return URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        }
        return FileManager.default.temporaryDirectory
    }()
}
