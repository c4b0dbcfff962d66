import BirthdayBuzz
import BuzzChannels
import BuzzStore
import Logging

/// Escalation when unseen: a reminder that a `dbus` channel with `escalate`
/// showed, and that the user has neither acted on nor dismissed within that
/// channel's `escalate_after`, goes on to the `escalate` channels.
///
/// What was shown and what the notification server said about it are in the
/// store (`NotificationActionDesk` writes them as it hears them), so a daemon
/// that restarts keeps what it knew. A notification closed in any way other
/// than by the user (expired, closed by a call, undefined), one whose server
/// went away, and one acted on while no daemon listened all stay unseen.
///
/// An escalation is a ledger row per escalate channel: the reminder's event id
/// and kind, state `pending`, the reminder's fire time, `via` "escalated from
/// NAME". A row that exists already is left alone, so an escalation is sent
/// once across restarts; the dispatcher's pass sends the pending rows. `buzz
/// run` only: it alone listens for the server's signals.
struct UnseenEscalation {
    let store: BuzzDatabase
    let ledger: any DeliveryLedger
    let config: BuzzConfig
    let logger: Logger

    /// Where and when a channel escalates.
    struct Settings: Equatable {
        var channels: [String]
        var after: Int
    }

    /// The escalation of channel `name` as the config says it now; nil when it
    /// does not escalate (a watched notification of a channel whose `escalate` was
    /// removed since then is never due, and goes with the store's retention).
    func settings(of name: String) -> Settings? {
        guard let channel = config.resolvedChannel(named: name), channel.typeName == DBusChannel.typeName,
              let options = try? DBusChannel.options(of: channel), !options.escalate.isEmpty else { return nil }
        return Settings(channels: options.escalate, after: options.escalateAfter)
    }

    /// Writes the escalation rows of every watched notification due at `now`
    /// and marks it escalated; returns how many rows it wrote. Runs under the
    /// dispatch lock, so no other pass writes the same rows meanwhile.
    @discardableResult
    func run(now: Int64) throws -> Int {
        var written = 0
        for shown in try store.watchedNotifications() {
            guard let settings = settings(of: shown.channel), shown.shownAt + Int64(settings.after) <= now else { continue }
            // The reminder the notification showed: its kind, contact and fire time are the escalation's.
            let reminder = try ledger.row(eventID: shown.eventID, channel: shown.channel)
            for channel in settings.channels {
                if try ledger.row(eventID: shown.eventID, channel: channel) != nil {
                    // Already there: escalated before (a crash before the mark below), or a channel of the route.
                    logger.info("\(shown.eventID) via \(channel) is in the ledger already; not escalated again")
                    continue
                }
                try ledger.save(LedgerRow(eventID: shown.eventID, channel: channel,
                                          contactID: reminder?.contactID ?? shown.contactID,
                                          kind: reminder?.kind ?? .reminder, state: .pending,
                                          fireAt: reminder?.fireAt ?? shown.shownAt, nextAttemptAt: now,
                                          via: .escalated(from: shown.channel)), now: now)
                written += 1
                logger.notice("notification \(shown.id) (\(shown.eventID) via \(shown.channel)) unseen after \(settings.after) s: escalated to \(channel)")
            }
            try store.markEscalated(id: shown.id, server: shown.server)
        }
        return written
    }

    /// When the next watched notification escalates (at least a second after
    /// `now`); nil when none is watched: nothing to wake for.
    func nextDeadline(now: Int64) throws -> Int64? {
        try store.watchedNotifications().compactMap { shown -> Int64? in
            guard let settings = settings(of: shown.channel) else { return nil }
            return max(shown.shownAt + Int64(settings.after), now + 1)
        }.min()
    }
}
