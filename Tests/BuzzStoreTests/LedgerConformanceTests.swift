import BirthdayBuzz
import BuzzStore
import BuzzTestKit
import Foundation
import Testing

/// The checks every ledger must pass, on the SQLite ledger (a fresh database
/// in a temporary folder) and on the in-memory one the dispatcher tests use.
@Suite struct LedgerConformanceTests {
    @Test(arguments: LedgerConformance.checks)
    func sqliteLedger(_ check: LedgerConformance.Check) throws {
        let directory = TestFolders.temporary.appendingPathComponent("buzz-conformance-" + UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try check.run(on: SQLiteLedger(try BuzzDatabase(directory: directory)))
    }

    @Test(arguments: LedgerConformance.checks)
    func inMemoryLedger(_ check: LedgerConformance.Check) throws {
        try check.run(on: InMemoryLedger())
    }
}
