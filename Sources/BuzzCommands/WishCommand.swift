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
        let targets = try contacts.map { try context.resolve($0, in: store) }
        let (ask, lock) = try AskFlow.start(context, store: store, via: via, dryRun: dryRun, force: force)
        defer { withExtendedLifetime(lock) {} }
        let flow = WishFlow(ask: ask)
        let (_, refusals, failures) = try await AskFlow.each(targets) { contact in
            try await flow.wish(contact)
            return true
        }
        if failures > 0 { throw ExitCode(1) }
        if refusals > 0 { throw ExitCode(2) }
    }
}
