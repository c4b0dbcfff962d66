import ArgumentParser
import BirthdayBuzz
import BuzzFiles
import BuzzStore
import Foundation

/// `buzz wish`: a birthday greeting to the contact, by the ask routes and rules (DESIGN §6a).
struct WishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wish",
        abstract: "Send a contact a birthday greeting: by SMS, email, or a message to share.",
        discussion: """
            Routes, address checks and ask.email_mode are those of `ask` (ask.order, ask.sms, ask.email); on \
            a terminal a contact with a phone and an email is asked which. The text comes from \
            templates/<locale>/wish.mustache in the contact's language. A wish is for today's birthday, else \
            the latest of the past 7 days (belated), else the next one; once per birthday: again needs --force.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "Contact ids or case-insensitive parts of names.")
    var contacts: [String]

    @Option(help: "Only this route: sms, email or share.")
    var via: BuzzConfig.AskRoute?

    @Flag(help: "Show the route, the address and the text; send nothing.")
    var dryRun = false

    @Flag(help: "Wish again for a birthday already wished.")
    var force = false

    func validate() throws {
        if contacts.isEmpty { throw ValidationError("name the contacts to wish a happy birthday") }
    }

    func run() async throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let templates: MessageTemplates
        do {
            templates = try MessageTemplates(overrideDirectories: context.templateDirectories)
        } catch {
            throw CLIError.request("\(error)")
        }
        let targets = try contacts.map { try context.resolve($0, in: store) }
        let lock = dryRun ? nil : try DispatchLock.acquire(dataDirectory: context.dataDirectory,
                                                          wait: context.config.delivery.lockWait)
        if !dryRun, lock == nil {
            throw CLIError.runtime("another dispatcher is busy with \(context.dataDirectory); try again in a moment")
        }
        defer { withExtendedLifetime(lock) {} }
        let flow = WishFlow(ask: AskFlow(context: context, store: store, templates: templates,
                                         wiring: ChannelWiring(context: context), via: via, dryRun: dryRun, force: force))
        var failures = 0
        var refusals = 0
        for contact in targets {
            do {
                try await flow.wish(contact)
            } catch let error as CLIError where error.status == 2 {
                printError(error.message)
                refusals += 1
            } catch let error as CLIError {
                printError(error.message)
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode(1) }
        if refusals > 0 { throw ExitCode(2) }
    }
}

/// One wish, start to finish: which birthday, once per birthday, route, text,
/// send or share, ledger. `wish` and the notification's "Send wishes" use it.
struct WishFlow {
    let ask: AskFlow
    /// On a terminal, offer the phone or the email when both are there.
    var offerRoutes = true

    /// How many days after a birthday a wish is still for it (a belated wish).
    static let belatedDays = 7

    /// The birthday a wish on `today` is for: today's, else the latest of the past
    /// seven days, else the next.
    static func occurrence(of birthday: Birthday, today: LocalDate, feb29: Feb29Policy) -> Occurrence {
        let recent = birthday.nextOccurrence(onOrAfter: today.adding(days: -belatedDays), feb29: feb29)
        return recent.date <= today ? recent : birthday.nextOccurrence(onOrAfter: today, feb29: feb29)
    }

    /// `<contact-id>/wish/<occurrence-date>`.
    static func eventID(contactID: String, occurrence: LocalDate) -> String {
        PlannedEvent.encodeContactID(contactID) + "/wish/" + occurrence.description
    }

    func wish(_ contact: Contact) async throws {
        let context = ask.context
        guard let birthday = contact.birthday else {
            throw CLIError.request("\(contact.name) has no birthday on file: nothing to wish for (ask for it: buzz ask)")
        }
        let occurrence = Self.occurrence(of: birthday, today: context.today, feb29: context.config.reminders.feb29)
        let eventID = Self.eventID(contactID: contact.id, occurrence: occurrence.date)
        var already: String?
        if !ask.force {
            let earlier = try runtime { try ask.store.history(for: contact.id) }
                .first { $0.eventID == eventID && $0.state == .sent }
            if let earlier {
                let when = earlier.sentAt.map { " on " + context.clock.localDate(at: $0).description } ?? ""
                already = "\(contact.name) was wished\(when) by \(earlier.channel) for the birthday of \(occurrence.date); again needs --force"
            }
        }
        if let already, !ask.dryRun { throw CLIError.request(already) }
        let route = try ask.chooseRoute(for: contact, doing: "wish", offerRoutes: offerRoutes)
        let text = ask.templates.renderWish(firstName: contact.card.firstName, name: contact.name, age: occurrence.age,
                                            senderName: context.config.ask.senderName,
                                            locales: [contact.card.language, context.config.general.locale].compactMap { $0 })
        if ask.dryRun {
            let days = context.today.days(until: occurrence.date)
            let when = days == 0 ? "today" : days < 0 ? "\(-days) day\(days == -1 ? "" : "s") ago" : "in \(days) day\(days == 1 ? "" : "s")"
            print("\(contact.name): birthday \(occurrence.date) (\(when))" + (occurrence.age.map { ", turning \($0)" } ?? ""))
            ask.show(route: route, text: text, contact: contact)
            if let already { print("  (\(already))") }
            return
        }
        try await ask.deliver(route: route, text: text, contact: contact, eventID: eventID, kind: .wish)
        // Sent through a channel, the ledger row is written by the send; a share or a
        // mail opened in the mail client is recorded here, so a second wish needs --force.
        if route.channel == nil {
            let row = LedgerRow(eventID: eventID, channel: AskFlow.how(route) == "share" ? "share" : "compose",
                                contactID: contact.id, kind: .wish, state: .sent, fireAt: context.now, attempts: 1,
                                sentAt: context.now)
            try runtime { try SQLiteLedger(ask.store).save(row, now: context.now) }
        }
    }
}
