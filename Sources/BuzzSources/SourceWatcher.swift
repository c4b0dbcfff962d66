import BuzzSystem
import CBuzzLinux
import Foundation
import Synchronization

/// Watches local sources with inotify and calls back once they have been
/// quiet for `debounce` seconds (docs/design/sources.md: `run` re-syncs and re-plans).
///
/// Each path is watched itself (a folder: files created, written, renamed
/// in or out, deleted) and through its parent folder, filtered to its own
/// name: an editor or vdirsyncer writing a temp file and renaming it over a
/// `.vcf`, a new sub-folder, or the whole folder replaced by a rename are all
/// seen. When the parent is missing too, the nearest folder above that exists
/// is watched for the missing branch, so a parent that is removed and made
/// again (with the cards in it) is seen as well. `watch(_:)` is called again after each sync, so a new sub-folder
/// gets its own watch. The inotify fd is watched by a thread of its own
/// (`PollThread`), blocked in poll(2), like `run`'s wall-clock timer: nothing wakes while no
/// file changes, and the poll has a timeout only during a debounce. (Not a
/// Dispatch source: its worker would arm libdispatch's one-second monitor and
/// wake an idle daemon every second; see `DaemonExecutor`.)
public final class SourceWatcher: Sendable {
    private let core: Core
    /// The thread blocked in poll(2) on the inotify fd.
    private let thread: PollThread

    public init(debounce: Double = 2, onChange: @escaping @Sendable () -> Void) throws {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw SourceError.runtime("cannot watch the sources (\(SystemError("inotify_init1")))")
        }
        let core = Core(descriptor: fd, debounce: debounce, onChange: onChange)
        self.core = core
        do {
            // Events start or extend a quiet period; the poll has a timeout only
            // while one runs, and once it has lasted `debounce` seconds, `onChange` runs.
            thread = try PollThread(name: "buzz.watch", watching: [fd], timeout: { core.timeout() }) { ready in
                if ready[0].revents & Int16(POLLIN) != 0 { core.drain() }
                core.changeIfQuiet()
                return .keepWatching
            } onEnd: { _ in
                core.close()
            }
        } catch {
            close(fd)
            throw SourceError.runtime("cannot watch the sources (\(error))")
        }
    }

    deinit {
        stop()
    }

    /// Ends the watching thread and closes the inotify fd (idempotent): no
    /// `onChange` runs once this has returned.
    public func stop() {
        thread.stop()
    }

    /// Replaces the set of watched paths; returns the paths that could not be
    /// watched, with why (a folder that does not exist yet is watched through
    /// its parent, and gets its own watch once it appears and is synced).
    @discardableResult
    public func watch(_ paths: [String]) -> [String] { core.watch(paths) }
}

/// What the poll thread shares with the watcher (kept apart so that the
/// thread does not keep the watcher alive).
private final class Core: Sendable {
    private struct State {
        /// Watch descriptor → the names it reports on (nil: every name).
        var filters: [Int32: [String?]] = [:]
        /// When the last relevant event came (monotonic seconds), while a debounce runs.
        var lastEvent: Double?
    }

    let descriptor: Int32
    let debounce: Double
    private let state = Mutex(State())
    private let onChange: @Sendable () -> Void

    /// Events that mean "something in here may have changed".
    private static let mask: UInt32 = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
                                             | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

    init(descriptor: Int32, debounce: Double, onChange: @escaping @Sendable () -> Void) {
        self.descriptor = descriptor
        self.debounce = debounce
        self.onChange = onChange
    }

    /// Whether the inotify fd is still open (`close()` ends that).
    private let open = Mutex(true)

    /// Closes the inotify fd, once; `watch` does nothing from then on.
    func close() {
        open.withLock { open in
            if open { _ = Glibc.close(descriptor) }
            open = false
        }
    }

    func watch(_ paths: [String]) -> [String] {
        // Under the lock: `close()` cannot close the fd (and another open reuse its number) meanwhile.
        open.withLock { open in open ? addWatches(paths) : [] }
    }

    private func addWatches(_ paths: [String]) -> [String] {
        var filters: [Int32: [String?]] = [:]
        var problems: [String] = []
        func add(_ path: String, name: String?) {
            let wd = inotify_add_watch(descriptor, path, Core.mask)
            if wd >= 0 {
                filters[wd, default: []].append(name)
            } else if errno != ENOENT && errno != ENOTDIR {
                problems.append("\(path): \(SystemError("inotify_add_watch").reason)")
            }
        }
        for path in Set(paths) {
            if Core.isFolder(path) { add(path, name: nil) }
            // The nearest folder above it that exists, filtered to the next name
            // down: normally the parent (a card renamed over the file, the folder
            // replaced); while the parent is gone too, the folder where the missing
            // branch will be made again, so its return starts a sync, whose
            // `watch` then goes one level deeper, down to the path itself.
            let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            for depth in stride(from: parts.count - 1, through: 0, by: -1) {
                let above = parts[..<depth].joined(separator: "/")
                let folder = path.hasPrefix("/") ? "/" + above : (above.isEmpty ? "." : above)
                if Core.isFolder(folder) {
                    add(folder, name: parts[depth])
                    break
                }
            }
        }
        let stale = state.withLock { state -> [Int32] in
            let old = Set(state.filters.keys)
            state.filters = filters
            return Array(old.subtracting(filters.keys))
        }
        for wd in stale { inotify_rm_watch(descriptor, wd) }
        return problems
    }

    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Reads every pending event; any that concerns a watched name starts (or
    /// extends) the quiet period.
    func drain() {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        var relevant = false
        while true {
            let count = read(descriptor, buffer, size)
            if count <= 0 { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameBytes = Int(event.len)
                var name: String?
                if nameBytes > 0 {
                    let start = buffer.advanced(by: offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self)
                    name = String(cString: start)
                }
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    relevant = true
                } else if let filters = state.withLock({ $0.filters[event.wd] }) {
                    if filters.contains(where: { $0 == nil || $0 == name }) { relevant = true }
                }
                offset += MemoryLayout<inotify_event>.size + nameBytes
            }
        }
        guard relevant else { return }
        state.withLock { $0.lastEvent = Core.monotonic() }
    }

    /// Milliseconds until the quiet period ends (0: it has), -1 while none runs.
    func timeout() -> Int32 {
        guard let last = state.withLock({ $0.lastEvent }) else { return -1 }
        let remaining = debounce - (Core.monotonic() - last)
        return remaining <= 0 ? 0 : Int32((remaining * 1000).rounded(.up))
    }

    /// Runs `onChange` once the quiet period has lasted `debounce` seconds.
    func changeIfQuiet() {
        let quiet = state.withLock { state -> Bool in
            guard let last = state.lastEvent, debounce - (Core.monotonic() - last) <= 0 else { return false }
            state.lastEvent = nil
            return true
        }
        if quiet { onChange() }
    }

    private static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
