import ArgumentParser
import BirthdayBuzz
import BuzzFiles
import BuzzStore
import Foundation

/// `buzz wish`: a birthday greeting to the contact, by the ask routes and rules (docs/design/asks-and-wishes.md).
struct WishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wish",
        abstract: "Send a contact a birthday greeting: by SMS, email, or a message to share.",
        discussion: """
            Routes, address checks and ask.email_mode are those of `ask` (ask.order, ask.sms, ask.email); on \
            a terminal a contact with a phone and an email is asked which. The text comes from \
            templates/<locale>/wish.mustache in the contact's language. A wish is for today's birthday, else \
            the latest of the past 7 days (belated), else the next one; once per birthday: again needs --force.
            With --at HH:MM the wish is scheduled instead: `tick` or `run` sends it at that time on the contact's \
            next birthday (today if the time has not passed), in the contact's time zone (the card's TZ) when known; \
            only sms and email through a channel can be scheduled. While one is scheduled, `buzz wish CONTACT` sends \
            nothing; --force sends now and cancels it; --cancel removes it.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "Contact ids or case-insensitive parts of names.")
    var contacts: [String]

    @Option(help: "Only this route: sms, email or share.")
    var via: BuzzConfig.AskRoute?

    @Flag(help: "Show the route, the address and the text; send nothing.")
    var dryRun = false

    @Flag(help: "Wish again for a birthday already wished; with a wish scheduled, send now and cancel it.")
    var force = false

    @Option(help: ArgumentHelp("Schedule the wish for this time (HH:MM) on the contact's next birthday, in their time zone when known.",
                               valueName: "HH:MM"))
    var at: String?

    @Flag(help: "Cancel the contact's scheduled wish.")
    var cancel = false

    func validate() throws {
        if contacts.isEmpty { throw ValidationError("name the contacts to wish a happy birthday") }
        if let at, ScheduledWish.timeOfDay(at) == nil { throw ValidationError("--at \"\(at)\" is not a time of day (HH:MM, 00:00 to 23:59)") }
        if at != nil, cancel { throw ValidationError("--at and --cancel do not go together") }
        if cancel, force { throw ValidationError("--cancel and --force do not go together") }
        if at != nil, via == .share { throw ValidationError("a shared wish needs you to send it: it cannot be scheduled (--at needs sms or email)") }
    }

    func run() async throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        let targets = try contacts.map { try context.resolve($0, in: store) }
        let (ask, lock) = try AskFlow.start(context, store: store, via: via, dryRun: dryRun, force: force)
        defer { withExtendedLifetime(lock) {} }
        let flow = WishFlow(ask: ask)
        let time = at.flatMap(ScheduledWish.timeOfDay)
        let (_, refusals, failures) = try await AskFlow.each(targets) { contact in
            if cancel {
                try flow.cancel(contact)
            } else if let time {
                try flow.schedule(contact, at: time)
            } else {
                try await flow.wish(contact)
            }
            return true
        }
        if failures > 0 { throw ExitCode(1) }
        if refusals > 0 { throw ExitCode(2) }
    }
}
