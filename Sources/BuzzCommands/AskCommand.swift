import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import BuzzFiles
import BuzzStore
import Foundation

struct AskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ask",
        abstract: "Ask contacts without a birthday for it: by SMS, email, or a message to share.",
        discussion: """
            Routes follow ask.order (sms → email → share), skipping those a contact cannot take. \
            The text comes from templates/<locale>/ask.mustache in the contact's language. \
            Asking the same contact again within ask.cooldown_days needs --force.
            """)

    @ParentCommand var root: Buzz

    @Argument(help: "Contact ids or case-insensitive parts of names.")
    var contacts: [String] = []

    @Flag(help: "Every contact without a birthday that is not skipped.")
    var missing = false

    @Option(help: "Only this route: sms, email or share.")
    var via: BuzzConfig.AskRoute?

    @Flag(help: "Show the route, the address and the text; send nothing.")
    var dryRun = false

    @Flag(help: "Ask even within the cooldown.")
    var force = false

    @Flag(help: "Do not ask for confirmation (with --missing).")
    var yes = false

    func validate() throws {
        if missing == !contacts.isEmpty {
            throw ValidationError(missing ? "give contacts or --missing, not both" : "name contacts to ask, or use --missing")
        }
    }

    func run() async throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        var targets: [Contact]
        if missing {
            targets = try runtime { try store.allContacts() }
                .filter { $0.birthday == nil && $0.decision != .skip && !$0.isDeceased }
            guard !targets.isEmpty else {
                print("Everyone has a birthday on file (or is skipped): nobody to ask.")
                return
            }
            if !dryRun, !yes {
                print("Ask \(targets.count) contact\(targets.count == 1 ? "" : "s"): " + targets.map(\.name).joined(separator: ", "))
                guard Invocation.current.inputIsTerminal else {
                    throw CLIError.request("asking \(targets.count) contacts needs --yes when not on a terminal")
                }
                print("Send? [y/N] ", terminator: "")
                fflush(nil)
                guard readLine()?.lowercased().hasPrefix("y") == true else {
                    print("nothing sent")
                    return
                }
            }
        } else {
            targets = try contacts.map { try context.resolve($0, in: store) }
        }

        let (flow, lock) = try AskFlow.start(context, store: store, via: via, dryRun: dryRun, force: force)
        defer { withExtendedLifetime(lock) {} }
        let missing = missing
        let (asked, refusals, failures) = try await AskFlow.each(targets) { contact in
            // --missing passes over recently asked contacts: a weekly `ask --missing`
            // asks each one once per cooldown, and that is not an error.
            if missing, let cooling = flow.cooldown(contact) {
                print("\(cooling): not asked again yet")
                return false
            }
            try await flow.ask(contact)
            return true
        }
        if failures > 0 { throw ExitCode(1) }
        // Named contacts: any that could not be asked makes it a wrong request. With
        // --missing, those are reported and the others still count as done.
        if refusals > 0, !missing || asked == 0 { throw ExitCode(2) }
    }
}

extension BuzzConfig.AskRoute: ExpressibleByArgument {}
