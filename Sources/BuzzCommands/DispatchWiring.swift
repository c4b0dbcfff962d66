import BirthdayBuzz
import BuzzChannels
import BuzzFiles
import BuzzStore
import Foundation
import Synchronization

/// Builds a dispatcher for `tick` and `run`: the ledger, the planner, the
/// templates, and channels made on first use (a run that sends nothing loads none).
final class DispatchWiring: Sendable {
    let dispatcher: Dispatcher
    /// The `[digests.NAME]` sends, run after the reminder pass with the same channels.
    let digests: DigestDispatcher
    /// Wishes scheduled with `buzz wish --at`, run after the digests with the same channels.
    let wishes: ScheduledWishDispatcher
    private let built: ChannelCache

    /// - Parameter notificationActions: `buzz run`'s keeper of notification ids; with it, desktop
    ///   reminders on the day offer "Send wishes" and "Remind me later".
    init(context: Context, store: BuzzDatabase, consoleToStandardError: Bool = false,
         notificationActions: (any NotificationActionRecorder)? = nil) throws {
        var wiring = ChannelWiring(context: context)
        wiring.consoleToStandardError = consoleToStandardError
        wiring.notificationActions = notificationActions
        let templates: MessageTemplates
        do {
            templates = try MessageTemplates(overrideDirectories: context.templateDirectories)
        } catch {
            throw CLIError.request("\(error)")
        }
        let built = ChannelCache()
        self.built = built
        let config = context.config
        let renderer = TemplateRenderer(templates: templates, locale: config.general.locale, clock: WallClock(timeZone: config.general.timeZone))
        let scrubber = wiring.scrubber
        let channelWiring = wiring
        let channel: @Sendable (String) async -> Result<any NotificationChannel, DeliveryError> = { name in
            built.entries.withLock { cache in
                if let existing = cache[name] { return existing }
                let result: Result<any NotificationChannel, DeliveryError>
                if let channelConfig = config.resolvedChannel(named: name) {
                    result = channelWiring.build(channelConfig)
                } else {
                    result = .failure(.permanent("\(name): no such channel in the config"))
                }
                cache[name] = result
                return result
            }
        }
        let ledger = context.ledger(store)
        let planner = try context.planner()
        dispatcher = Dispatcher(
            config: config, planner: planner,
            ledger: ledger, renderer: renderer, channel: channel,
            scrub: { text, channel in scrubber.scrub(text, channel: channel) })
        digests = DigestDispatcher(config: config, prepared: planner.prepared, ledger: ledger, renderer: renderer,
                                   channel: channel,
                                   scrub: { text, channel in scrubber.scrub(text, channel: channel) })
        wishes = ScheduledWishDispatcher(config: config, ledger: ledger, templates: templates,
                                         contact: { id in try store.contact(id: id) }, channel: channel,
                                         scrub: { text, channel in scrubber.scrub(text, channel: channel) })
    }

    /// How many contacts a digest counts as missing a birthday: those without
    /// one that are neither skipped nor deceased (as `list --missing` shows
    /// them). Counted only when a digest is sent.
    static func missingCount(_ store: BuzzDatabase) -> DigestDispatcher.MissingCount {
        { try store.missingBirthdayCount() }
    }

    /// The reminder pass, then the digests' (so a digest lists the problems this
    /// pass found), as one report.
    func pass(contacts: [PlanningContact], store: BuzzDatabase, now: Int64, dryRun: Bool = false,
              shouldStop: @escaping @Sendable () -> Bool = { false }) async throws -> DispatchReport {
        // The digests' catch-up needs the watermark as it was before the reminder pass moves it.
        let watermark = try dispatcher.ledger.watermark()
        // One read of the unfinished rows (a scan of the ledger) for both passes.
        let unfinished = try dispatcher.ledger.unfinished()
        var report = try await dispatcher.pass(contacts: contacts, now: now, dryRun: dryRun, unfinished: unfinished,
                                               shouldStop: shouldStop)
        if !shouldStop() {
            report.add(try await digests.pass(contacts: contacts, missingCount: Self.missingCount(store), watermark: watermark,
                                              now: now, dryRun: dryRun, unfinished: unfinished, shouldStop: shouldStop))
        }
        if !shouldStop() {
            report.add(try await wishes.pass(now: now, dryRun: dryRun, unfinished: unfinished, shouldStop: shouldStop))
        }
        return report
    }

    /// When `run` wakes next: the next reminder or retry, or the next digest or its retry.
    func nextWake(contacts: [PlanningContact], now: Int64) throws -> Int64? {
        let unfinished = try dispatcher.ledger.unfinished()
        let reminders = try dispatcher.nextWake(contacts: contacts, now: now, unfinished: unfinished)
        let digest = try digests.nextWake(now: now, unfinished: unfinished)
        let wish = try wishes.nextWake(now: now, unfinished: unfinished)
        return [reminders, digest, wish].compactMap(\.self).min()
    }

    /// Closes every channel that was opened.
    func shutdown() async {
        let channels = built.entries.withLock { cache in cache.values.compactMap { try? $0.get() } }
        for channel in channels { await channel.shutdown() }
    }
}

extension Context {
    /// The delivery ledger of `store`: the one place commands get theirs, so none
    /// names the SQLite one (a ledger on another store is wired in here).
    func ledger(_ store: BuzzDatabase) -> any DeliveryLedger { SQLiteLedger(store) }
}

/// Channels built so far, by name (each is built once, on first use).
final class ChannelCache: Sendable {
    let entries = Mutex<[String: Result<any NotificationChannel, DeliveryError>]>([:])
}

/// Reminder and digest messages from the localized templates, in the user's language.
struct TemplateRenderer: ReminderRendering, DigestRendering {
    let templates: MessageTemplates
    let locale: String
    let clock: WallClock

    func reminder(for event: PlannedEvent, contact: PlanningContact, daysUntil: Int, routing: RoutingNote?) -> Message {
        // Open gift ideas go into the reminders before the day (the shipped templates
        // list them then); notes into every one that uses them.
        let text = templates.renderReminder(name: contact.name, firstName: contact.firstName, daysUntil: daysUntil,
                                            age: event.age, date: event.occurrence, locale: locale,
                                            occasion: event.occasion, giftIdeas: contact.giftIdeas, notes: contact.notes,
                                            routing: routing,
                                            theirDay: TheirDay(zone: contact.timeZone, occurrence: event.occurrence,
                                                               fireAt: event.fireAt, ours: clock))
        return Message(kind: .reminder(of: event.occasion.kind), id: event.id, title: text.title, body: text.body,
                       contact: .init(id: contact.id, name: contact.name), occurrence: event.occurrence,
                       daysUntil: daysUntil, locale: text.locale, urgency: event.occasion.kind.urgency)
    }

    func notice(_ entries: [NoticeEntry], today: LocalDate) -> Message {
        let text = templates.renderNotice(entries, locale: locale)
        return Message(kind: .notice, id: "", title: text.title, body: text.body, locale: text.locale, urgency: .critical)
    }

    func digest(_ content: DigestContent, id: String) -> Message {
        let text = templates.renderDigest(content, locale: locale)
        return Message(kind: .digest, id: id, title: text.title, body: text.body, occurrence: content.date, locale: text.locale)
    }
}
