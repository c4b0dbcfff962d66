import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import BuzzFiles
import BuzzProcess
import BuzzStore
import Foundation

/// One ask, start to finish: cooldown, route, text, send or share, record (docs/design/asks-and-wishes.md).
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
        if contact.isDeceased { throw CLIError.request("\(contact.name): in memory (deceased); no ask is sent") }
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
    /// address picked on a TTY when there are several (docs/design/asks-and-wishes.md); shared by
    /// `ask` and `wish`.
    /// With `offerRoutes`, on a TTY and without `--via`, a contact who can be
    /// reached more than one way is asked which (phone or email, as `triage` asks).
    func chooseRoute(for contact: Contact, doing verb: String, offerRoutes: Bool = false) throws -> AskPlan.Route {
        let plan = AskPlan(card: contact.card, config: context.config, only: via)
        var routes = plan.routes
        if offerRoutes, interactive, via == nil, routes.count > 1, !dryRun, Invocation.current.inputIsTerminal, Invocation.current.outputIsTerminal {
            let labels = routes.map { "\(Self.how($0))" + ($0.kind == .share ? "" : $0.address.map { " to \($0)" } ?? "") }
            let choice = pickIndex(labels, prompt: "How to reach \(contact.name)?")
            routes = [routes[choice]]
        }
        guard var route = routes.first else {
            let reasons = plan.passedOver.map { "\($0.route.rawValue): \($0.reason)" }.joined(separator: "; ")
            throw CLIError.request("\(contact.name): no way to \(verb)\(via.map { " by \($0.rawValue)" } ?? "")" + (reasons.isEmpty ? "" : " (\(reasons))"))
        }
        if route.candidates.count > 1, route.kind != .share {
            if interactive, Invocation.current.inputIsTerminal, Invocation.current.outputIsTerminal, !dryRun {
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
        // A dry run of a share shows the link the share would print.
        if route.kind == .share, let link = Self.shareLink(text: text, address: route.address) { print("  " + link) }
    }

    /// The `sms:` link for a phone number, the `mailto:` link for an address.
    static func shareLink(text: (title: String, body: String, locale: String), address: String?) -> String? {
        guard let address else { return nil }
        return address.hasPrefix("+") || address.first?.isNumber == true
            ? AskLink.sms(address, body: text.body) : AskLink.mailto(address, subject: text.title, body: text.body)
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
        let ledger = context.ledger(store)
        var row = LedgerRow(eventID: eventID, channel: channelName, contactID: contact.id, kind: kind, state: .sending,
                            fireAt: context.now, attempts: 1)
        try runtime { try ledger.save(row, now: context.now) }
        let message = Message(kind: kind, id: eventID, title: text.title, body: text.body,
                              contact: .init(id: contact.id, name: contact.name), locale: text.locale,
                              recipient: route.kind == .sms ? .phone(address) : .email(address))
        // The dispatchers' sender: the same attempt count, backoff and scrubbing,
        // temporary against permanent, as reminders.
        let built = wiring.build(config)
        let scrubber = wiring.scrubber, scrubName = config.name
        let sender = ChannelSender(backoff: Backoff(cap: context.config.delivery.maxBackoff,
                                                    maxAttempts: context.config.delivery.maxAttempts),
                                   channel: { _ in built },
                                   scrub: { text, _ in scrubber.scrub(text, channel: scrubName) })
        let failure = await sender.send(message, through: channelName)
        if case .success(let channel) = built { await channel.shutdown() }
        sender.settle(&row, after: failure, now: context.now)
        if kind != .wish, row.state == .retrying {
            // Nothing sends an ask again by itself (`tick` and `run` resume
            // reminders, digests and wishes): an ask that could not go out now
            // is `failed`, for the user to ask again.
            row.state = .failed
            row.nextAttemptAt = nil
        }
        if failure != nil {
            try runtime { try ledger.save(row, now: context.now) }
            if row.state == .retrying {
                // A wish is retried by `tick` and `run` until the end of the birthday;
                // a running daemon re-plans its wake-up for the retry (in the daemon
                // itself, a click already wakes the loop).
                if interactive { notifyRunningDaemon(dataDirectory: context.dataDirectory) }
                throw CLIError.runtime("\(contact.name): wish not sent yet: \(row.lastError ?? ""); "
                                       + "it will be retried by the next tick (or the running daemon) until the end of the day")
            }
            throw CLIError.runtime("\(contact.name): \(kind == .wish ? "wish" : "ask") not sent: \(row.lastError ?? "")")
        }
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
        let link = Self.shareLink(text: text, address: address)
        say("Share this with \(contact.name):\n\n\(text.body)\n")
        if let link { say(link) }
        if let tool = clipboardTool(), copy(text.body, with: tool) {
            say("(copied to the clipboard with \(tool.first ?? ""))")
        }
    }

    /// The clipboard tool of the session: wl-copy under Wayland, xclip under X.
    private func clipboardTool() -> [String]? {
        let environment = Invocation.current.environment
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
        runner.environment = Invocation.current.environment.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
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

extension AskFlow {
    /// What `ask` and `wish` do before their first contact: the templates
    /// checked, the dispatch lock taken (not for a dry run), the flow made.
    static func start(_ context: Context, store: BuzzDatabase, via: BuzzConfig.AskRoute?, dryRun: Bool, force: Bool) throws
        -> (flow: AskFlow, lock: (any DeliveryLock)?) {
        let templates: MessageTemplates
        do {
            templates = try MessageTemplates(overrideDirectories: context.templateDirectories)
        } catch {
            throw CLIError.request("\(error)")
        }
        let lock = dryRun ? nil : try runtime { try context.ledger(store).deliveryLock(wait: context.config.delivery.lockWait) }
        if !dryRun, lock == nil {
            throw CLIError.runtime("another dispatcher is busy with \(context.dataDirectory); try again in a moment")
        }
        let flow = AskFlow(context: context, store: store, templates: templates, wiring: ChannelWiring(context: context),
                           via: via, dryRun: dryRun, force: force)
        return (flow, lock)
    }

    /// Runs `body` for each contact; each failure is printed on its own line
    /// and counted: refused (the request was wrong, status 2) or failed.
    /// `body` returns false for a contact it passed over.
    static func each(_ contacts: [Contact], _ body: (Contact) async throws -> Bool) async throws
        -> (done: Int, refused: Int, failed: Int) {
        var counts = (done: 0, refused: 0, failed: 0)
        for contact in contacts {
            do {
                if try await body(contact) { counts.done += 1 }
            } catch let error as CLIError where error.status == 2 {
                printError(error.message)
                counts.refused += 1
            } catch let error as CLIError {
                printError(error.message)
                counts.failed += 1
            }
        }
        return counts
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
        // Never a birthday greeting to someone who has died (also from a notification's button).
        if contact.isDeceased { throw CLIError.request("\(contact.name): in memory (deceased); no wish is sent") }
        guard let birthday = contact.birthday else {
            throw CLIError.request("\(contact.name) has no birthday on file: nothing to wish for (ask for it: buzz ask)")
        }
        // A wish scheduled for later (`--at`) is the wish: nothing now, unless --force
        // sends now (and cancels it).
        if let waiting = try scheduled(contact) {
            let when = Self.when(waiting, contact: contact, ours: context.clock)
            guard ask.force else {
                ask.say("\(contact.name): a wish is scheduled \(when); nothing sent now (--force sends now and cancels it, --cancel removes it)")
                return
            }
            if !ask.dryRun { try cancel(contact, reason: "sent by hand instead (buzz wish --force)", quiet: true) }
        }
        let occurrence = Self.occurrence(of: birthday, today: context.today, feb29: context.config.reminders.feb29)
        let eventID = Self.eventID(contactID: contact.id, occurrence: occurrence.date)
        var already: String?
        if !ask.force {
            let earlier = try runtime { try context.ledger(ask.store).history(for: contact.id) }
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
            try runtime { try context.ledger(ask.store).save(row, now: context.now) }
        }
    }
}
