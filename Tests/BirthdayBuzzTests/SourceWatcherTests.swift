import BuzzSources
import BuzzTestKit
import Foundation
import Synchronization
import Testing

/// `run`'s inotify watch on local sources (a short debounce here; `run` uses 2 s).
@Suite(.timeLimit(.minutes(1)))
struct SourceWatcherTests {
    /// How often the watcher called back.
    final class Changes: Sendable {
        let count = Mutex(0)

        func wait(until expected: Int, _ what: String) async throws {
            let deadline = ContinuousClock.now + .seconds(5)
            while count.withLock({ $0 }) < expected {
                guard ContinuousClock.now < deadline else {
                    Issue.record("no change seen after \(what)")
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// A vdir whose parent folder is removed (a backup restore, a sync tool that
    /// recreates its tree) and made again with the cards in it is seen again:
    /// the folder above the missing parent is watched meanwhile.
    @Test func aFolderWhoseParentIsRemovedAndMadeAgainIsSeen() async throws {
        let root = TestFolders.temporary.appendingPathComponent("buzz-watch-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let book = root + "/outer/contacts"
        try FileManager.default.createDirectory(atPath: book, withIntermediateDirectories: true)
        try "BEGIN:VCARD\r\nEND:VCARD\r\n".write(toFile: book + "/one.vcf", atomically: false, encoding: .utf8)
        let changes = Changes()
        let watcher = try SourceWatcher(debounce: 0.1) { changes.count.withLock { $0 += 1 } }
        #expect(watcher.watch([book]).isEmpty)

        try FileManager.default.removeItem(atPath: root + "/outer")
        try await changes.wait(until: 1, "the parent was removed")
        #expect(watcher.watch([book]).isEmpty)  // as `run` does after each sync

        try FileManager.default.createDirectory(atPath: book, withIntermediateDirectories: true)
        try "BEGIN:VCARD\r\nEND:VCARD\r\n".write(toFile: book + "/two.vcf", atomically: false, encoding: .utf8)
        try await changes.wait(until: 2, "the parent was made again with a card")
        #expect(watcher.watch([book]).isEmpty)

        // And the folder itself is watched again.
        let seen = changes.count.withLock { $0 }
        try "BEGIN:VCARD\r\nEND:VCARD\r\n".write(toFile: book + "/three.vcf", atomically: false, encoding: .utf8)
        try await changes.wait(until: seen + 1, "a card was written in the folder made again")
    }
}
