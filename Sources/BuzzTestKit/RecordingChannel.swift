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

/// The checks every channel adapter must pass (like swift-configuration's
/// provider compatibility tests). Call from each adapter's test with a live
/// channel and a way to read back what the far end received.
public enum ChannelConformance {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Sample messages covering the shapes a channel must carry intact: a
    /// reminder with a non-ASCII, quote-laden name, an ask addressed to a
    /// contact, a plain message with an empty body.
    public static func sampleMessages(recipient: Message.Recipient? = nil) -> [Message] {
        [
            Message(kind: .reminder, id: "urn:uuid:conformance/1/2027-03-15", title: "Geburtstag von Jürgen \"Jo\" O'Brien",
                    body: "Morgen wird Jürgen 40 — gratulieren!", contact: .init(id: "urn:uuid:conformance", name: "Jürgen O'Brien"),
                    occurrence: LocalDate(year: 2027, month: 3, day: 15), daysUntil: 1, locale: "de"),
            Message(kind: .ask, id: "urn:uuid:conformance/ask/1", title: "Quick question", body: "When is your birthday?",
                    contact: .init(id: "urn:uuid:conformance", name: "Sam"), locale: "en", recipient: recipient),
            Message(kind: .message, id: "send/conformance", title: "Plain", body: "", locale: "en"),
        ]
    }

    /// Delivers every sample and checks, through `received`, that each arrived
    /// once with its title intact. `received` returns the titles seen so far.
    public static func run(_ channel: any NotificationChannel, recipient: Message.Recipient? = nil,
                           received: () async throws -> [String]) async throws {
        let messages = sampleMessages(recipient: recipient)
        for message in messages { try await channel.deliver(message) }
        let titles = try await received()
        for message in messages where titles.filter({ $0 == message.title }).count != 1 {
            throw Failure(description: "\(channel.name): \"\(message.title)\" arrived \(titles.filter { $0 == message.title }.count) times; received \(titles)")
        }
        await channel.shutdown()
    }
}
