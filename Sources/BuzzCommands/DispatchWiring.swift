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
        dispatcher = Dispatcher(
            config: config, planner: Planner(config: config, defaultChannels: context.defaultChannels),
            ledger: SQLiteLedger(store), renderer: renderer,
            channel: { name in
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
            },
            scrub: { text, channel in scrubber.scrub(text, channel: channel) })
    }

    /// Closes every channel that was opened.
    func shutdown() async {
        let channels = built.entries.withLock { cache in cache.values.compactMap { try? $0.get() } }
        for channel in channels { await channel.shutdown() }
    }
}

/// Channels built so far, by name (each is built once, on first use).
final class ChannelCache: Sendable {
    let entries = Mutex<[String: Result<any NotificationChannel, DeliveryError>]>([:])
}

/// Reminder messages from the localized templates, in the user's language.
struct TemplateRenderer: ReminderRendering {
    let templates: MessageTemplates
    let locale: String
    let clock: WallClock

    func reminder(for event: PlannedEvent, contact: PlanningContact, daysUntil: Int, routing: RoutingNote?) -> Message {
        // Open gift ideas go into the reminders before the day (the shipped templates
        // list them then); notes into every one that uses them.
        let text = templates.renderReminder(name: contact.name, firstName: contact.firstName, daysUntil: daysUntil,
                                            age: event.age, date: event.occurrence, locale: locale,
                                            occasion: event.occasion, giftIdeas: contact.giftIdeas, notes: contact.notes,
                                            routing: routing)
        return Message(kind: event.occasion == .birthday ? .reminder : .anniversary, id: event.id, title: text.title, body: text.body,
                       contact: .init(id: contact.id, name: contact.name), occurrence: event.occurrence,
                       daysUntil: daysUntil, locale: text.locale)
    }

    func notice(_ entries: [NoticeEntry], today: LocalDate) -> Message {
        let text = templates.renderNotice(entries, locale: locale)
        return Message(kind: .notice, id: "", title: text.title, body: text.body, locale: text.locale, urgency: .critical)
    }
}
