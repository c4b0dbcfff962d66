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
        let templates: MessageTemplates
        do {
            templates = try MessageTemplates(overrideDirectories: context.templateDirectories)
        } catch {
            throw CLIError.request("\(error)")
        }
        var targets: [Contact]
        if missing {
            targets = try runtime { try store.allContacts() }.filter { $0.birthday == nil && $0.decision != .skip }
            guard !targets.isEmpty else {
                print("Everyone has a birthday on file (or is skipped): nobody to ask.")
                return
            }
            if !dryRun, !yes {
                print("Ask \(targets.count) contact\(targets.count == 1 ? "" : "s"): " + targets.map(\.name).joined(separator: ", "))
                guard isatty(STDIN_FILENO) == 1 else {
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

        let lock = dryRun ? nil : try DispatchLock.acquire(dataDirectory: context.dataDirectory,
                                                          wait: context.config.delivery.lockWait)
        if !dryRun, lock == nil {
            throw CLIError.runtime("another dispatcher is busy with \(context.dataDirectory); try again in a moment")
        }
        defer { withExtendedLifetime(lock) {} }
        let flow = AskFlow(context: context, store: store, templates: templates, wiring: ChannelWiring(context: context),
                           via: via, dryRun: dryRun, force: force)
        var failures = 0
        var refusals = 0
        var asked = 0
        for contact in targets {
            // --missing passes over recently asked contacts: a weekly `ask --missing`
            // asks each one once per cooldown, and that is not an error.
            if missing, let cooling = flow.cooldown(contact) {
                print("\(cooling): not asked again yet")
                continue
            }
            do {
                try await flow.ask(contact)
                asked += 1
            } catch let error as CLIError where error.status == 2 {
                printError(error.message)
                refusals += 1
            } catch let error as CLIError {
                printError(error.message)
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode(1) }
        // Named contacts: any that could not be asked makes it a wrong request. With
        // --missing, those are reported and the others still count as done.
        if refusals > 0, !missing || asked == 0 { throw ExitCode(2) }
    }
}

/// One ask, start to finish: cooldown, route, text, send or share, record (DESIGN §6).
/// Shared by `ask` and `triage`.
struct AskFlow {
    let context: Context
    let store: BuzzDatabase
    let templates: MessageTemplates
    let wiring: ChannelWiring
    var via: BuzzConfig.AskRoute?
    var dryRun = false
    var force = false
    /// Whether a terminal may be asked to pick an address (false in the daemon: a click has no terminal).
    var interactive = true
    /// Where what happened is told: standard output for a command; the daemon's
    /// debug log for a click on a notification (the lines name the contact).
    var say: @Sendable (String) -> Void = { print($0) }

    /// "Kim was asked on 2027-01-01 by sms (again from 2027-01-31)" while the
    /// contact is within `ask.cooldown_days` (and neither --force nor --dry-run).
    func cooldown(_ contact: Contact) -> String? {
        guard !force, !dryRun, let last = contact.lastRequestDate, let asked = LocalDate(iso: last),
              asked.days(until: context.today) < context.config.ask.cooldownDays else { return nil }
        let again = asked.adding(days: context.config.ask.cooldownDays)
        return "\(contact.name) was asked on \(last)\(contact.requestChannel.map { " by \($0)" } ?? "") (again from \(again))"
    }

    func ask(_ contact: Contact) async throws {
        if let birthday = contact.birthday {
            print("\(contact.name) already has a birthday (\(birthday)); nothing to ask")
            return
        }
        if let cooling = cooldown(contact) {
            throw CLIError.request("\(cooling); asking again before then needs --force")
        }
        let route = try chooseRoute(for: contact, doing: "ask")
        let text = templates.renderAsk(firstName: contact.card.firstName, name: contact.name,
                                       senderName: context.config.ask.senderName,
                                       locales: [contact.card.language, context.config.general.locale].compactMap { $0 })
        let how = Self.how(route)
        if dryRun {
            show(route: route, text: text, contact: contact)
            return
        }
        let count = try runtime { try store.askCount(for: contact.id) }
        let eventID = PlannedEvent.encodeContactID(contact.id) + "/ask/\(count + 1)"
        try await deliver(route: route, text: text, contact: contact, eventID: eventID, kind: .ask)
        try runtime { try store.recordAsk(contactID: contact.id, date: context.today, route: how, now: context.now) }
    }

    /// "sms", "email", "share", or "email (compose)" for a mail opened in the mail client.
    static func how(_ route: AskPlan.Route) -> String {
        route.kind == .email && route.channel == nil ? "email (compose)" : route.kind.rawValue
    }

    /// The first route of `ask.order` (or `--via`) the contact can take, with the
    /// address picked on a TTY when there are several (DESIGN §6); shared by
    /// `ask` and `wish`.
    /// With `offerRoutes`, on a TTY and without `--via`, a contact who can be
    /// reached more than one way is asked which (phone or email, as `triage` asks).
    func chooseRoute(for contact: Contact, doing verb: String, offerRoutes: Bool = false) throws -> AskPlan.Route {
        let plan = AskPlan(card: contact.card, config: context.config, only: via)
        var routes = plan.routes
        if offerRoutes, interactive, via == nil, routes.count > 1, !dryRun, isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 {
            let labels = routes.map { "\(Self.how($0))" + ($0.kind == .share ? "" : $0.address.map { " to \($0)" } ?? "") }
            let choice = pickIndex(labels, prompt: "How to reach \(contact.name)?")
            routes = [routes[choice]]
        }
        guard var route = routes.first else {
            let reasons = plan.passedOver.map { "\($0.route.rawValue): \($0.reason)" }.joined(separator: "; ")
            throw CLIError.request("\(contact.name): no way to \(verb)\(via.map { " by \($0.rawValue)" } ?? "")" + (reasons.isEmpty ? "" : " (\(reasons))"))
        }
        if route.candidates.count > 1, route.kind != .share {
            if interactive, isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1, !dryRun {
                route.address = pick(route.candidates, for: contact.name)
            } else {
                say("\(contact.name): \(route.candidates.count) \(route.kind == .sms ? "numbers" : "addresses"); using \(route.address ?? "") (\(route.kind == .sms ? "cell first, then preferred" : "preferred first"))")
            }
        }
        return route
    }

    /// `--dry-run`: the route, the address, the channel, the locale and the text.
    func show(route: AskPlan.Route, text: (title: String, body: String, locale: String), contact: Contact) {
        print("\(contact.name): by \(Self.how(route))" + (route.address.map { " to \($0)" } ?? "")
              + (route.channel.map { " via channel \($0)" } ?? "") + " [\(text.locale)]")
        print("  " + text.title)
        print(text.body.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n"))
    }

    /// Shares, opens the mail client, or sends through the route's channel.
    func deliver(route: AskPlan.Route, text: (title: String, body: String, locale: String), contact: Contact,
                 eventID: String, kind: Message.Kind) async throws {
        switch route.kind {
        case .share:
            share(text: text, address: route.address, contact: contact)
        case .email where route.channel == nil:
            guard let address = route.address, let link = AskLink.mailto(address, subject: text.title, body: text.body) else {
                throw CLIError.request("\(contact.name): no usable email address")
            }
            try compose(link)
            say("\(contact.name): opened your mail client for \(address)")
        case .sms, .email:
            try await send(route: route, text: text, contact: contact, eventID: eventID, kind: kind)
        }
    }

    /// Sends through the route's channel, through the ledger (`<contact>/ask/<n>`,
    /// `<contact>/wish/<date>`), written before and after.
    private func send(route: AskPlan.Route, text: (title: String, body: String, locale: String), contact: Contact,
                      eventID: String, kind: Message.Kind) async throws {
        guard let channelName = route.channel, let address = route.address,
              let config = context.config.resolvedChannel(named: channelName) else {
            throw CLIError.request("\(contact.name): channel \(route.channel ?? "?") is not configured")
        }
        let ledger = SQLiteLedger(store)
        var row = LedgerRow(eventID: eventID, channel: channelName, contactID: contact.id, kind: kind, state: .sending,
                            fireAt: context.now, attempts: 1)
        try runtime { try ledger.save(row, now: context.now) }
        let message = Message(kind: kind, id: eventID, title: text.title, body: text.body,
                              contact: .init(id: contact.id, name: contact.name), locale: text.locale,
                              recipient: route.kind == .sms ? .phone(address) : .email(address))
        var failure: DeliveryError?
        switch wiring.build(config) {
        case .failure(let error): failure = error
        case .success(let channel):
            do { try await channel.deliver(message) } catch let error as DeliveryError { failure = error } catch {
                failure = .temporary("\(channelName): \(error)")
            }
            await channel.shutdown()
        }
        if let failure {
            row.state = .failed
            row.lastError = wiring.scrubber.scrub(failure.message, channel: config.name)
            try runtime { try ledger.save(row, now: context.now) }
            throw CLIError.runtime("\(contact.name): \(kind == .wish ? "wish" : "ask") not sent: \(row.lastError ?? "")")
        }
        row.state = .sent
        row.sentAt = context.now
        try runtime { try ledger.save(row, now: context.now) }
        say("\(contact.name): \(kind == .wish ? "wished" : "asked") by \(route.kind.rawValue) at \(address)")
    }

    private func pick(_ candidates: [String], for name: String) -> String {
        candidates[pickIndex(candidates, prompt: "\(name) has several:")]
    }

    /// A numbered list on the terminal; the first entry unless another number is typed.
    private func pickIndex(_ labels: [String], prompt: String) -> Int {
        print(prompt)
        for (index, label) in labels.enumerated() { print("  \(index + 1)) \(label)") }
        print("which one? [1] ", terminator: "")
        fflush(nil)
        if let line = readLine(), let choice = Int(line.trimmingCharacters(in: .whitespaces)),
           labels.indices.contains(choice - 1) {
            return choice - 1
        }
        return 0
    }

    /// Prints the text and its link, and copies it to the clipboard when a tool is there.
    private func share(text: (title: String, body: String, locale: String), address: String?, contact: Contact) {
        var link: String?
        if let address {
            link = address.hasPrefix("+") || address.first?.isNumber == true
                ? AskLink.sms(address, body: text.body) : AskLink.mailto(address, subject: text.title, body: text.body)
        }
        say("Share this with \(contact.name):\n\n\(text.body)\n")
        if let link { say(link) }
        if let tool = clipboardTool(), copy(text.body, with: tool) {
            say("(copied to the clipboard with \(tool.first ?? ""))")
        }
    }

    /// The clipboard tool of the session: wl-copy under Wayland, xclip under X.
    private func clipboardTool() -> [String]? {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["PATH"] ?? ProgramRunner.defaultSearchPath
        func find(_ name: String) -> String? { try? ProgramRunner.resolve(name, searchPath: path) }
        if environment["WAYLAND_DISPLAY"] != nil, let tool = find("wl-copy") { return [tool] }
        if environment["DISPLAY"] != nil, let tool = find("xclip") { return [tool, "-selection", "clipboard"] }
        if let tool = find("wl-copy") { return [tool] }
        return nil
    }

    /// A desktop tool of the user's own session (not a program the config
    /// names): started by `ProgramRunner` like a plugin (no shell, own process
    /// group, no libdispatch, so the daemon stays quiet afterwards), but with
    /// the user's whole environment, which it needs to find the display, the
    /// session bus and the mail client.
    private static func sessionTool(_ arguments: [String], timeout: Double) -> ProgramRunner {
        var runner = ProgramRunner(arguments: arguments, timeout: timeout, outputLimit: 4096)
        runner.environment = ProcessInfo.processInfo.environment.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        return runner
    }

    private func copy(_ text: String, with tool: [String]) -> Bool {
        let result = try? Self.sessionTool(tool, timeout: 10).runSynchronously(standardInput: Array(text.utf8))
        return result?.termination == .exited(0)
    }

    /// `xdg-open mailto:…` (argv, no shell; the link is percent-encoded and the
    /// address validated). xdg-open returns once the mail client has started;
    /// one in a terminal keeps it until it closes, so the wait is long (a day)
    /// rather than a timeout that would stop the user's mail client.
    private func compose(_ link: String) throws {
        let result: ProgramResult
        do {
            result = try Self.sessionTool(["xdg-open", link], timeout: 86_400).runSynchronously()
        } catch {
            throw CLIError.runtime("cannot run xdg-open: \(error.detail)")
        }
        guard result.termination == .exited(0) else {
            throw CLIError.runtime("xdg-open \(result.termination); is a mail client set up?")
        }
    }
}

extension BuzzConfig.AskRoute: ExpressibleByArgument {}
