import BuzzSystem
import Foundation
import Synchronization
import Testing

/// `PollThread`, the one poll(2) loop the daemon's parts run on: a readable
/// descriptor reaches the handler, `stop()` returns once the thread has ended,
/// and no descriptor of its own is left open.
@Suite(.timeLimit(.minutes(1)))
struct PollThreadTests {
    /// What the thread did, in order.
    final class Events: Sendable {
        let lines = Mutex<[String]>([])
        let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let expected = Mutex(0)

        func add(_ line: String) {
            let waiter = lines.withLock { lines -> CheckedContinuation<Void, Never>? in
                lines.append(line)
                return expected.withLock { lines.count >= $0 } ? waiting.withLock { $0.take() } : nil
            }
            waiter?.resume()
        }

        /// Returns once `count` events have come (no sleep: the handler resumes it).
        func wait(for count: Int) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = lines.withLock { lines -> Bool in
                    if lines.count >= count { return true }
                    expected.withLock { $0 = count }
                    waiting.withLock { $0 = continuation }
                    return false
                }
                if done { continuation.resume() }
            }
        }

        var all: [String] { lines.withLock { $0 } }
    }

    static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(Glibc.pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    /// The descriptors of this process that are `pipe:[inode]`.
    static func openPipes(inode: UInt64) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == "pipe:[\(inode)]"
        }
    }

    @Test func aReadableDescriptorReachesTheHandlerAndStopJoinsTheThread() async throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let events = Events()
        let thread = try PollThread(name: "test.poll", watching: [readEnd], onStart: {
            events.add("start")
            return .keepWatching
        }, handle: { ready in
            var byte: UInt8 = 0
            if ready[0].revents & Int16(POLLIN) != 0, read(readEnd, &byte, 1) == 1 { events.add("read \(byte)") }
            return .keepWatching
        }, onEnd: { end in
            events.add("end \(end)")
        })
        let stopPipe = thread.stopPipeIdentity.inode
        #expect(Self.openPipes(inode: stopPipe).count == 2)  // its stop pipe, both ends

        var byte: UInt8 = 7
        #expect(write(writeEnd, &byte, 1) == 1)
        await events.wait(for: 2)
        byte = 8
        #expect(write(writeEnd, &byte, 1) == 1)
        await events.wait(for: 3)

        thread.stop()
        // Joined: the thread's last words are in before stop() returned, and its pipe is closed.
        #expect(events.all == ["start", "read 7", "read 8", "end stopped"])
        #expect(Self.openPipes(inode: stopPipe).isEmpty)
        thread.stop()  // idempotent
        // The watched descriptor is the caller's: still open.
        #expect(fcntl(readEnd, F_GETFD) >= 0)
    }

    @Test func aHandlerThatFinishesEndsTheLoopAndStopStillJoins() async throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let events = Events()
        let thread = try PollThread(name: "test.finish", watching: [readEnd], handle: { _ in .finish },
                                    onEnd: { end in events.add("end \(end)") })
        let stopPipe = thread.stopPipeIdentity.inode
        var byte: UInt8 = 1
        #expect(write(writeEnd, &byte, 1) == 1)
        await events.wait(for: 1)
        #expect(events.all == ["end finished"])
        thread.stop()
        #expect(Self.openPipes(inode: stopPipe).isEmpty)
    }

    @Test func aTimeoutAskedForReachesTheHandlerWithNothingReady() async throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let events = Events()
        let rounds = Mutex(0)
        // A timeout of 0 for the first round only, then none: one empty round, then a wait.
        let thread = try PollThread(name: "test.timeout", watching: [readEnd],
                                    timeout: { rounds.withLock { $0 } == 0 ? 0 : -1 },
                                    handle: { ready in
            rounds.withLock { $0 += 1 }
            events.add("revents \(ready[0].revents)")
            return .keepWatching
        })
        await events.wait(for: 1)
        thread.stop()
        #expect(events.all == ["revents 0"])
    }

    /// Dropping the last reference stops and joins the thread too.
    @Test func deinitStopsTheThread() async throws {
        let (readEnd, writeEnd) = try Self.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let events = Events()
        var thread: PollThread? = try PollThread(name: "test.deinit", watching: [readEnd], handle: { _ in .keepWatching },
                                                 onEnd: { end in events.add("end \(end)") })
        let stopPipe = try #require(thread).stopPipeIdentity.inode
        thread = nil
        #expect(events.all == ["end stopped"])
        #expect(Self.openPipes(inode: stopPipe).isEmpty)
    }
}
