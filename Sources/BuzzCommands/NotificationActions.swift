import BirthdayBuzz
import BuzzChannels
import BuzzFiles
import BuzzStore
import Foundation
import Logging
import Synchronization

/// A click on a reminder's action, resolved to the notification it was on.
struct NotificationAction: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// "Send wishes": the wish flow for the contact.
        case wish
        /// "Remind me later": the reminder once more after `reminders.snooze`.
        case snooze
    }

    var kind: Kind
    var notification: ShownNotification
}

/// `buzz run`'s side of notification actions (docs/design/asks-and-wishes.md): keeps the id of
/// every notification shown with actions in the store, listens for the
/// server's `ActionInvoked` / `NotificationClosed` on a bus connection of its
/// own, and hands each click to the daemon's loop (which runs it under the
/// dispatch lock, as a pass).
///
/// The listener starts when the first such notification is shown, or at the
/// daemon's start when the store still holds shown notifications: a click on
/// one a previous daemon showed is honoured.
final class NotificationActionDesk: NotificationActionRecorder, Sendable {
    private let store: BuzzDatabase
    private let logger: Logger
    /// Clicks heard and not yet run (a class: the listener's closure holds it).
    private final class Inbox: Sendable {
        let actions = Mutex<[NotificationAction]>([])
    }

    private let pending = Inbox()
    /// Created with the desk, started on demand (no libdbus load before a notification needs it).
    let listener: NotificationListener
    /// The daemon's clock: when a notification was shown; woken when a click was queued.
    private let clock: any DaemonClock

    /// - Parameter clock: the daemon's clock (a queued click wakes the loop sleeping on it).
    init(store: BuzzDatabase, environment: [String: String], logger: Logger, clock: any DaemonClock) {
        self.store = store
        self.logger = logger
        self.clock = clock
        let pending = pending
        listener = NotificationListener(environment: environment) { signal in
            Self.handle(signal, store: store, logger: logger, pending: pending, wake: { clock.wake() })
        }
    }

    /// At the daemon's start: listen when notifications of an earlier run may still be clicked.
    func startIfNotificationsAreKept() {
        do {
            let kept = clock.now() - BuzzDatabase.shownNotificationRetention
            if try store.hasShownNotifications(since: kept) { listener.start() }
        } catch {
            logger.error("cannot read the shown notifications: \(error)")
        }
    }

    func stop() {
        listener.stop()
    }

    /// The clicks heard since the last call, oldest first.
    func takeActions() -> [NotificationAction] {
        pending.actions.withLock { actions in
            defer { actions.removeAll() }
            return actions
        }
    }

    // MARK: NotificationActionRecorder

    func shown(notification id: UInt32, server: String, message: Message, channel: String) {
        shown(notification: id, server: server, message: message, channel: channel, watched: false)
    }

    func shown(notification id: UInt32, server: String, message: Message, channel: String, watched: Bool) {
        guard let contact = message.contact else { return }
        let shown = ShownNotification(id: id, eventID: message.id, contactID: contact.id, channel: channel,
                                      shownAt: clock.now(), server: server, escalation: watched ? .watching : nil)
        do {
            try store.recordShown(shown)
        } catch {
            logger.error("cannot keep notification \(id) for its actions\(watched ? " and its escalation" : ""): \(error)")
            return
        }
        listener.start()
    }

    // MARK: The listener's thread

    private static func handle(_ signal: NotificationSignal, store: BuzzDatabase, logger: Logger,
                               pending: Inbox, wake: @Sendable () -> Void) {
        switch signal {
        case .listening:
            logger.info("listening for notification actions")
        case .stopped(let problem):
            if let problem { logger.notice("not listening for notification actions: \(problem)") }
        case .closed(let id, let reason, let sender):
            // Closed means no action can come for it any more: said by the server that showed it. A watched
            // notification is kept: dismissed by the user (reason 2) it is acknowledged; closed any other way
            // (expired, closed by a call, undefined) it stays unseen and escalates at its time.
            do {
                guard let shown = try store.shownNotification(id: id, server: sender) else { return }
                guard let server = shown.server, server == sender else {
                    logger.notice("\(forged("NotificationClosed", id: id, sender: sender, shown: shown))")
                    return
                }
                try store.notificationClosed(id: id, server: server, reason: reason)
                if shown.escalation == .watching {
                    let how = reason == 2 ? "dismissed by the user: seen" : "closed (reason \(reason)): not seen"
                    logger.info("notification \(id) (\(shown.eventID) via \(shown.channel)) \(how)")
                }
            } catch {
                logger.error("cannot forget notification \(id): \(error)")
            }
        case .actionInvoked(let id, let key, let sender):
            // Looked up here, in the server's order: its NotificationClosed follows the click.
            let shown: ShownNotification?
            do { shown = try store.shownNotification(id: id, server: sender) } catch {
                logger.error("cannot look up notification \(id): \(error)")
                return
            }
            let kind: NotificationAction.Kind?
            switch key {
            case DBusChannel.wishAction: kind = .wish
            case DBusChannel.snoozeAction: kind = .snooze
            default: kind = nil  // another application's action, or the default click
            }
            guard let shown else {
                if kind != nil {
                    logger.notice("a \(key) click on notification \(id), which is not one this data dir showed; ignored")
                }
                return
            }
            // Any process on the bus can send ActionInvoked to our connection by
            // name; only the server that answered our Notify may make us act.
            guard let server = shown.server, server == sender else {
                if kind != nil || shown.escalation == .watching {
                    logger.notice("\(forged("a \(key) click", id: id, sender: sender, shown: shown))")
                }
                return
            }
            // Any action (the default click too) on a watched notification: the user saw it.
            if shown.escalation == .watching {
                do {
                    try store.notificationActedOn(id: id, server: server)
                    logger.info("notification \(id) (\(shown.eventID) via \(shown.channel)) acted on: seen")
                } catch {
                    logger.error("cannot keep that notification \(id) was seen: \(error)")
                }
            }
            guard let kind else { return }
            pending.actions.withLock { $0.append(NotificationAction(kind: kind, notification: shown)) }
            wake()
        }
    }
}

/// The log line for a signal about one of our notifications from a sender that did not show it.
private func forged(_ what: String, id: UInt32, sender: String?, shown: ShownNotification) -> String {
    let from = sender ?? "no sender"
    guard let server = shown.server else {
        return "\(what) on notification \(id) from \(from) ignored: it was shown by an earlier version of buzz, "
            + "which did not keep the notification server's bus name"
    }
    return "\(what) on notification \(id) from \(from) ignored: not the notification server that showed it (\(server))"
}

extension BirthdayDaemon {
    /// Runs the clicks heard since the last pass, under the dispatch lock.
    func runActions(_ setup: DaemonSetup, now: Int64) async {
        for action in actions.takeActions() {
            switch action.kind {
            case .snooze: snooze(action.notification, setup: setup, now: now)
            case .wish: await wish(action.notification, setup: setup, now: now)
            }
        }
    }

    /// "Remind me later": `<event-id>/snooze/<n>` in the ledger, `pending` until
    /// now + `reminders.snooze`; the pass delivers it then, once.
    private func snooze(_ shown: ShownNotification, setup: DaemonSetup, now: Int64) {
        let id = PlannedEvent.snoozeID(after: shown.eventID)
        let ledger = setup.wiring.dispatcher.ledger
        let at = now + Int64(setup.context.config.reminders.snooze)
        do {
            if try ledger.row(eventID: id, channel: shown.channel) != nil {
                logger.info("\(id) via \(shown.channel) is already snoozed")
                return
            }
            try ledger.save(LedgerRow(eventID: id, channel: shown.channel, contactID: shown.contactID, kind: .reminder,
                                      state: .pending, fireAt: at, nextAttemptAt: at), now: now)
            logger.info("snoozed \(shown.eventID): \(id) via \(shown.channel) at \(setup.context.clock.iso8601(at))")
        } catch {
            logger.error("cannot snooze \(shown.eventID): \(error)")
        }
    }

    /// "Send wishes": `buzz wish` for the contact, without a terminal. Its rules
    /// hold: once per birthday (the ledger), a compose or share route only opens
    /// or copies the text; only a configured channel route sends. What happened
    /// (sent to whom, the text to share, or why not) comes back as a notification
    /// through the channel that showed the reminder: a click has no terminal.
    private func wish(_ shown: ShownNotification, setup: DaemonSetup, now: Int64) async {
        var context = setup.context
        context.now = now
        let logger = logger
        let told = ToldLines()
        do {
            // An id matches first; a contact that is gone would fall back to a name match, hence the check.
            guard let contact = try store.findContacts(shown.contactID).first(where: { $0.id == shown.contactID }) else {
                logger.notice("wish from notification \(shown.id): contact \(shown.contactID) is gone")
                return
            }
            let templates = try MessageTemplates(overrideDirectories: context.templateDirectories)
            var ask = AskFlow(context: context, store: store, templates: templates, wiring: ChannelWiring(context: context))
            ask.interactive = false
            ask.say = { line in
                logger.debug("\(line)")
                told.append(line)
            }
            let flow = WishFlow(ask: ask, offerRoutes: false)
            try await flow.wish(contact)
            logger.info("wish for \(shown.contactID) done (from notification \(shown.id))")
        } catch let error as CLIError {
            // The message names the contact: debug level only.
            logger.info("no wish for \(shown.contactID) from notification \(shown.id) (\(error.status == 2 ? "refused" : "failed"))")
            logger.debug("\(error.message)")
            told.append(error.message)
        } catch {
            logger.error("wish for \(shown.contactID) failed: \(error)")
            told.append("The wish could not be sent: \(error)")
        }
        await tell(told.text, about: shown, context: context)
    }

    /// A plain notification (no actions) through the channel that showed the reminder.
    private func tell(_ body: String, about shown: ShownNotification, context: Context) async {
        guard !body.isEmpty, let config = context.config.resolvedChannel(named: shown.channel),
              case .success(let channel) = ChannelWiring(context: context).build(config) else { return }
        let message = Message(kind: .message, id: shown.eventID + "/wish-notice", title: "Send wishes", body: body,
                              contact: .init(id: shown.contactID, name: ""))
        do {
            try await channel.deliver(message)
        } catch {
            logger.notice("cannot show how the wish went via \(shown.channel): \(error)")
        }
        await channel.shutdown()
    }
}

/// What the wish flow said, for the notification that tells the user.
private final class ToldLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
