import Foundation

/// Whether a test server's `process` has ended: Foundation says so, or /proc does
/// (a zombie, or gone). Foundation notices an exit late when another test's child
/// inherited the server's socket, and waiting for it would hold a test thread.
public func hasEnded(_ process: Process) -> Bool {
    guard process.isRunning else { return true }
    return hasEnded(pid: process.processIdentifier)
}

/// Whether process `pid` has ended as the kernel sees it: gone from /proc, or a
/// zombie (also for a process that is not our child, which we cannot wait for).
public func hasEnded(pid: pid_t) -> Bool {
    guard pid > 0 else { return true }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    guard let paren = stat.lastIndex(of: ")") else { return false }
    return stat[stat.index(after: paren)...].dropFirst().first == "Z"
}

/// Polls (every 2 ms, at most `limit`) until `process` has ended (`hasEnded`);
/// true when it has. For synchronous stops (a deinit) instead of `waitUntilExit()`.
@discardableResult
public func waitForEnd(_ process: Process, limit: Duration = .seconds(5)) -> Bool {
    waitForEnd(limit: limit) { hasEnded(process) }
}

/// The same for process `pid` (`hasEnded(pid:)`).
@discardableResult
public func waitForEnd(pid: pid_t, limit: Duration = .seconds(5)) -> Bool {
    waitForEnd(limit: limit) { hasEnded(pid: pid) }
}

private func waitForEnd(limit: Duration, _ ended: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while !ended() {
        if clock.now >= deadline { return false }
        usleep(2_000)
    }
    return true
}
