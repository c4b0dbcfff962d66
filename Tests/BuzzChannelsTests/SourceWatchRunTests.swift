import BuzzTestKit
import Foundation
import Testing

/// `run`'s watch on a vdir source when the folders above it come and go.
@Suite(.timeLimit(.minutes(1)))
struct SourceWatchRunTests {
    /// The parent of the vdir removed and made again with cards in it (a
    /// restore, a sync tool that rebuilds its tree): the daemon sees the cards
    /// without a SIGHUP.
    @Test func aVdirWhoseParentFolderIsRemovedAndMadeAgainIsSyncedAgain() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("sync/contacts/one.vcf", VCard.card(uid: "one", name: "One", bday: "1970-01-01"))
        try sandbox.writeConfig("""
            [general]
            timezone = "UTC"
            [reminders]
            channels = ["console"]
            [sources.phone]
            type = "vdir"
            path = "\(sandbox.root)/sync/contacts"
            """)
        let daemon = try DaemonProcess(sandbox)
        try await daemon.waitUntilReady()
        /// The "synced phone: …" lines so far.
        func synced() -> [String] {
            daemon.log.split(separator: "\n").filter { $0.contains("synced phone: ") }
                .map { String($0.split(separator: "synced phone: ").last ?? "") }
        }
        try await daemon.waitForLog("synced phone: ")
        #expect(synced() == ["1 added, 0 updated, 0 unchanged, 0 removed, 0 skipped"])

        // Gone: the sync fails (a missing folder keeps its contacts) and says so.
        try FileManager.default.removeItem(atPath: sandbox.root + "/sync")
        try await daemon.waitForLog("source phone: not synced")
        // Back, with another card (and without the first): seen by the watch, no SIGHUP.
        _ = try sandbox.write("sync/contacts/two.vcf", VCard.card(uid: "two", name: "Two", bday: "1970-01-02"))
        let deadline = ContinuousClock.now + .seconds(15)
        while synced().count < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(synced().dropFirst().first == "1 added, 0 updated, 0 unchanged, 1 removed, 0 skipped", "\(daemon.log)")
        #expect(kill(daemon.pid, SIGTERM) == 0)
        #expect(try await daemon.waitForExit(within: .seconds(10)) == 0, "\(daemon.log)")
    }
}
