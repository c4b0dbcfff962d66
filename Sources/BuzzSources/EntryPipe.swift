import Foundation
import BirthdayBuzz
import BuzzStore

/// Hands batches of parsed entries from the reading thread to the writing one,
/// holding at most a few batches so memory stays bounded.
///
/// `@unchecked Sendable`: every stored property is read and written only while
/// `condition` is locked.
public final class EntryPipe: @unchecked Sendable {
    public struct Item: Sendable {
        public var file: String
        public var entry: ImportEntry
        /// A person's card's column values, computed on the reading thread.
        public var columns: CardColumns?
    }

    public static let batchSize = 128
    private static let capacity = 4

    private let condition = NSCondition()
    private var queue: [(items: [Item], bytes: Int)] = []
    /// Batches the writer is done with, going back to the reading thread: the
    /// cards are freed on the thread that allocated them (glibc's malloc then
    /// frees into that thread's own arena, instead of the writer taking the
    /// reader's arena lock for every string), and the batch buffer is reused.
    private var returned: [[Item]] = []
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?

    /// Adds the batch, waiting while the pipe is full; false once the reader
    /// cancelled. `items` comes back empty (a returned batch, emptied here on
    /// the caller's thread, or a new one), ready for the next cards.
    public func put(_ items: inout [Item], bytes: Int) -> Bool {
        condition.lock()
        while queue.count >= EntryPipe.capacity, !cancelled { condition.wait() }
        if cancelled {
            condition.unlock()
            return false
        }
        var full = returned.popLast() ?? []
        swap(&items, &full)
        queue.append((full, bytes))
        condition.broadcast()
        condition.unlock()
        items.removeAll(keepingCapacity: true)
        if items.capacity < EntryPipe.batchSize { items.reserveCapacity(EntryPipe.batchSize) }
        return true
    }

    /// Hands a processed batch back to the reading thread (see `returned`).
    public func giveBack(_ items: [Item]) {
        condition.lock()
        if returned.count <= EntryPipe.capacity { returned.append(items) }
        condition.unlock()
    }

    /// Ends the stream, with the error that stopped it if any.
    public func finish(error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch; nil at the end; throws what stopped the producer.
    public func take() throws -> ([Item], Int)? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty, !finished { condition.wait() }
        if !queue.isEmpty {
            let next = queue.removeFirst()
            condition.broadcast()
            return (next.items, next.bytes)
        }
        if let failure { throw failure }
        return nil
    }

    /// Waits, without taking anything, until a batch is there or the producer
    /// has ended (or the consumer cancelled); throws what stopped a producer
    /// that ended without a batch.
    public func waitForData() throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty, !finished, !cancelled { condition.wait() }
        if queue.isEmpty, let failure { throw failure }
    }

    /// The consumer gave up: release a producer waiting for room.
    public func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
