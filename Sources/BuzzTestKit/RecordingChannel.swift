import BirthdayBuzz
import Synchronization

/// A channel that records what it was handed, and fails on demand: the
/// in-memory stand-in for the dispatcher's tests (never for a wire protocol).
public final class RecordingChannel: NotificationChannel {
    public let name: String
    private let state = Mutex<(delivered: [Message], failures: [DeliveryError])>(([], []))

    public init(name: String = "recording") {
        self.name = name
    }

    /// Messages delivered so far, in order.
    public var delivered: [Message] { state.withLock { $0.delivered } }

    /// Queues failures: the next deliveries throw these, in order, before succeeding again.
    public func failNext(_ errors: DeliveryError...) {
        state.withLock { $0.failures.append(contentsOf: errors) }
    }

    public func deliver(_ message: Message) async throws {
        let failure: DeliveryError? = state.withLock { state in
            if !state.failures.isEmpty { return state.failures.removeFirst() }
            state.delivered.append(message)
            return nil
        }
        if let failure { throw failure }
    }
}
