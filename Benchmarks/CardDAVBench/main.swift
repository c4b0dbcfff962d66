import BirthdayBuzz
import BuzzCardDAV
import Foundation

// Drives BuzzCardDAV the way a carddav source will, for Benchmarks/carddav.sh
// (until `buzz sync` exists). Usage:
//   carddav-bench URL USER PASSWORD_ENV ROUNDS
// Discovers the books, syncs the first from nothing, then syncs it again
// ROUNDS-1 times from the stored state, and prints one line per sync:
//   sync <n> <method> <cards> <removed> <requests> <seconds>
let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: carddav-bench URL USER PASSWORD_ENV [ROUNDS]\n".utf8))
    exit(2)
}
let rounds = arguments.count > 4 ? Int(arguments[4]) ?? 2 : 2
let password = ProcessInfo.processInfo.environment[arguments[3]]
let clock = ContinuousClock()
do {
    let client = try CardDAVClient(configuration: CardDAVConfiguration(name: "bench", url: arguments[1], username: arguments[2]),
                                   password: password)
    let discoveryStart = clock.now
    let books = try await client.discover()
    guard let book = books.first else { throw CardDAVError(.permanent, "no address book") }
    let discovered = clock.now - discoveryStart
    print("discover \(books.count) \(client.requestsMade) \(seconds(discovered))")
    var state: SyncState?
    for round in 0..<rounds {
        let start = clock.now
        let changes = try await client.sync(book: book, since: state)
        let took = clock.now - start
        state = changes.state
        let method = switch changes.method {
        case .unchanged: "unchanged"
        case .incremental: "incremental"
        case .full(let resynced): resynced ? "full-resync" : "full"
        }
        print("sync \(round) \(method) \(changes.changed.count) \(changes.removed.count) \(changes.requests) \(seconds(took))")
    }
} catch {
    FileHandle.standardError.write(Data("carddav-bench: \(error)\n".utf8))
    exit(1)
}

func seconds(_ duration: Duration) -> String {
    let (whole, attos) = duration.components
    return String(format: "%.4f", Double(whole) + Double(attos) / 1e18)
}
