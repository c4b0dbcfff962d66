import ArgumentParser
import BirthdayBuzz
import BuzzDaemon
import BuzzSources
import BuzzStore
import CurlSupport
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// `buzz run`: parses, wires the daemon from the config, and hands it to
/// BuzzDaemon's `DaemonServices` (the daemon's loop and parts live there).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The daemon: sleep until the next reminder or retry, deliver it, repeat.",
        discussion: """
            Sleeps on an absolute wall-clock timer (no polling), so suspend, resume and clock changes wake it. \
            SIGTERM or SIGINT: finish the delivery in flight, then exit 0. SIGHUP: reload the config, templates \
            and contacts and plan again (a broken config or template keeps the running one); import, include, \
            skip, set-birthday, clear-birthday and retry send it through <data dir>/run.pid. Logs go to \
            standard error, at BUZZ_LOG_LEVEL (debug names contacts; info is the default). Run either this or \
            `tick` from a timer: one is enough (the two never deliver at once). Configured sources are synced at \
            start; vdir and file sources are watched (inotify) and synced again about 2 s after they change. \
            With --now, the daemon's clock starts there and advances in real time (for tests and demos).
            """)

    @ParentCommand var root: Buzz

    func run() async throws {
        let logger = try daemonLogger(environment: Invocation.current.environment)
        // Everything that can be wrong with the request fails here, before any
        // state is touched: a broken config or template (2), another run (2).
        let context = try Context(root.global)
        let store = try context.openStore()  // creates the data dir (0700)
        let pidFile = try RunPidFile.claim(dataDirectory: context.dataDirectory)
        defer { pidFile.release() }
        // The wall clock; with --now, shifted to start there and advance in real time (docs/design/command-line.md).
        let timer: WallClockTimer
        do { timer = try WallClockTimer() } catch { throw CLIError.runtime(error.message) }
        let clock: any DaemonClock = root.global.now == nil ? timer : OffsetClock(base: timer, startingAt: context.now)
        // Desktop reminders on the day offer actions; clicks wake the loop (docs/design/asks-and-wishes.md).
        let actions = NotificationActionDesk(store: store, environment: context.environment, logger: logger, clock: clock)
        let wiring = try DispatchWiring(context: context, store: store, notificationActions: actions)

        let options = root.global
        var daemon = BirthdayDaemon(
            store: store, initial: DaemonSetup(context: context, wiring: wiring), clock: clock, pidFile: pidFile,
            logger: logger, actions: actions,
            reload: {
                var context = try Context(options)
                context.now = clock.now()  // not --now again: the daemon's clock has moved on since
                return DaemonSetup(context: context, wiring: try DispatchWiring(context: context, store: store,
                                                                                notificationActions: actions))
            })
        // Watched sources that changed wake the loop as SIGHUP does; it syncs
        // them, then plans again (sources added by a reload are watched too).
        let requests = daemon.requests
        let watcher = try? SourceWatcher {
            requests.requestSync()
            clock.wake()
        }
        daemon.watcher = watcher
        // The parts, each stopped by the group once the loop has ended: the
        // listener starts only when a notification needs it (no libdbus before).
        let services = DaemonServices(
            parts: [ThreadService("timer", stop: { timer.stop() }),
                    ThreadService("source watcher", stop: { watcher?.stop() }),
                    ThreadService("notification listener", stop: { actions.stop() })],
            loop: daemon, logger: logger)
        do {
            try await services.run(reload: {
                requests.requestReload()
                clock.wake()
            })
        } catch let error as CLIError {
            throw error
        } catch let error as DaemonError {
            throw CLIError.runtime(error.message)
        } catch {
            throw CLIError.runtime("run stopped: \(error)")
        }
    }

    /// swift-log to standard error at `BUZZ_LOG_LEVEL` (default `info`). The
    /// handler is handed to this logger only: no process-wide bootstrap.
    private func daemonLogger(environment: [String: String]) throws -> Logger {
        var level = Logger.Level.info
        if let text = environment["BUZZ_LOG_LEVEL"], !text.isEmpty {
            guard let parsed = Logger.Level(rawValue: text.lowercased()) else {
                let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw CLIError.request("BUZZ_LOG_LEVEL \"\(text)\" is not a log level (\(names))")
            }
            level = parsed
        }
        var logger = Logger(label: "birthdaybuzz") { label in OneLineLogHandler(StreamLogHandler.standardError(label: label)) }
        logger.logLevel = level
        return logger
    }
}

/// What a reload replaces: the config (in the context) and the dispatcher built from it.
struct DaemonSetup: Sendable {
    var context: Context
    var wiring: DispatchWiring
}

/// `buzz run`'s delivery loop as a `Service`: BuzzDaemon's `DaemonLoop` with
/// the rounds of this config — sync the sources, deliver what is due under the
/// dispatch lock, say when the next fire time, retry or sync is.
///
/// The time is an input: every "now" of the loop comes from `clock` (the
/// wall-clock timer, shifted by `run --now`), and so does every sleep.
///
/// SIGHUP reloads and re-plans; a graceful shutdown (SIGTERM, SIGINT) lets the
/// pass in flight finish, then returns.
struct BirthdayDaemon: Service, CustomStringConvertible {
    let store: BuzzDatabase
    let initial: DaemonSetup
    /// What time it is, and the sleep between passes (`WallClockTimer`, or an `OffsetClock` on it).
    let clock: any DaemonClock
    let pidFile: RunPidFile
    let logger: Logger
    /// Notification ids, the listener for clicks on them, and the clicks not yet run.
    let actions: NotificationActionDesk
    /// Reads the config and templates again; throws what is wrong with them.
    let reload: @Sendable () throws -> DaemonSetup
    /// The watcher of the local sources, when the group owns it and stops it
    /// with the notification listener (`RunCommand`). Nil: the daemon runs alone
    /// (a test), watches with a watcher of its own and stops both when it returns.
    var watcher: SourceWatcher?
    let requests = DaemonRequests()
    /// Where passes run: libcurl transfers happen inline on its thread, never
    /// on a Dispatch queue (whose worker would wake an idle daemon every second).
    let delivery = BlockingExecutor(name: "birthdaybuzz.run.deliver")
    /// Where `[health]` pings go out: beside the loop, so a slow monitor never holds up a pass.
    let pings = BlockingExecutor(name: "birthdaybuzz.run.health")

    /// When another dispatcher kept the lock past `delivery.lock_wait`, look again this soon.
    static let busyRetryDelay: Int64 = 60

    /// What logs call it (never the config or environment it holds).
    var description: String { "buzz run" }

    /// Runs until a stop is requested (`requests`, a graceful shutdown) or the
    /// task is cancelled. The process's signals are `DaemonServices`' to route
    /// (so a test can run the loop in-process, on a `VirtualClock`).
    func run() async throws {
        let requests = requests, clock = clock
        try pidFile.publish()
        let dataDirectory = initial.context.dataDirectory
        logger.info("started (pid \(getpid()), data dir \(dataDirectory), clock at \(initial.context.clock.iso8601(clock.now())))")
        actions.startIfNotificationsAreKept()
        let ownWatcher = watcher == nil ? try? SourceWatcher {
            requests.requestSync()
            clock.wake()
        } : nil
        defer {
            if let ownWatcher {
                ownWatcher.stop()
                actions.stop()
            }
        }
        var rounds = Rounds(daemon: self, watcher: watcher ?? ownWatcher)
        try await withGracefulShutdownHandler {
            try await DaemonLoop(clock: clock, requests: requests, logger: logger).run(&rounds)
        } onGracefulShutdown: {
            requests.requestStop()
            clock.wake()
        }
        logger.info("stopped")
    }
}

extension BirthdayDaemon {
    /// The daemon's rounds: what `DaemonLoop` runs at each wake.
    struct Rounds: DaemonRounds {
        let daemon: BirthdayDaemon
        let watcher: SourceWatcher?
        var setup: DaemonSetup
        /// The calendar last written, without its DTSTAMP: rewritten only when it changes.
        var exported: String?
        var health: HealthPings
        /// Sources sync beside the deliveries (each on its own thread): a sync
        /// that ends wakes the loop, which then plans again.
        let syncs: DaemonSourceSyncs

        init(daemon: BirthdayDaemon, watcher: SourceWatcher?) {
            self.daemon = daemon
            self.watcher = watcher
            setup = daemon.initial
            health = HealthPings(daemon.initial)
            syncs = DaemonSourceSyncs(store: daemon.store, clock: daemon.clock, logger: daemon.logger,
                                      requests: daemon.requests)
        }

        mutating func start() async {
            daemon.startSyncs(setup, syncs, onlyIfChanged: false, watcher: watcher)
        }

        mutating func prepare(after wake: DaemonWake) async {
            switch wake {
            case .reload:
                setup = await daemon.reloaded(from: setup)
                health.reconfigure(setup)
                daemon.startSyncs(setup, syncs, onlyIfChanged: true, watcher: watcher)
            case .sourcesChanged:
                daemon.startSyncs(setup, syncs, onlyIfChanged: true, watcher: watcher)
            case .clock:
                // A source synced by the clock (CardDAV's interval, a failure's retry).
                daemon.startSyncs(setup, syncs, onlyIfChanged: true, watcher: watcher, dueAt: daemon.clock.now())
            }
            // After a sync, the folders again: a new sub-folder gets a watch.
            if syncs.takeEnded() { daemon.watch(setup, watcher: watcher) }
        }

        mutating func pass(now: Int64) async throws -> Int64? {
            daemon.exportCalendar(setup, now: now, last: &exported)
            do {
                var (next, report) = try await daemon.pass(setup, now: now)
                if let report, let due = health.afterPass(report, now: now) {
                    daemon.ping(health.pinger, due)
                }
                if let idle = health.nextPing { next = min(next ?? idle, idle) }
                // The next unseen notification's escalation (none watched: no wake for it).
                if let escalation = try daemon.escalation(setup).nextDeadline(now: now) {
                    next = min(next ?? escalation, escalation)
                }
                // A source synced by the clock wakes the loop too (one syncing now wakes it when it ends).
                if let sourceWake = daemon.nextSourceSync(setup, syncs, now: now) {
                    next = min(next ?? sourceWake, sourceWake)
                }
                return next
            } catch let error as CLIError {
                throw DaemonError(error.message)  // the log line says the message, not the struct
            }
        }

        func timestamp(_ instant: Int64) -> String {
            setup.context.clock.iso8601(instant)
        }

        mutating func finish() async {
            syncs.stop()
            await setup.wiring.shutdown()
        }
    }
}

extension BirthdayDaemon {
    /// Starts syncing the configured sources (at start: all, read whole; later:
    /// the ones that changed, or with `dueAt`, those the clock has made due) on
    /// threads of their own, and watches the local ones. A source that cannot
    /// be read is logged when its sync ends and keeps its contacts.
    private func startSyncs(_ setup: DaemonSetup, _ syncs: DaemonSourceSyncs, onlyIfChanged: Bool,
                            watcher: SourceWatcher?, dueAt now: Int64? = nil) {
        let context = setup.context
        guard !context.config.sources.isEmpty else {
            if now == nil { watcher?.watch([]) }
            return
        }
        do {
            var sources = try context.configuredSources(today: context.clock.localDate(at: clock.now()))
            if let now {
                let running = syncs.running
                sources = sources.filter { source in
                    guard !running.contains(source.id), let next = nextClockSync(of: source, syncs, now: now) else { return false }
                    return next <= now
                }
                guard !sources.isEmpty else { return }
            } else {
                watch(sources, watcher: watcher)
            }
            syncs.start(sources, context: context, onlyIfChanged: onlyIfChanged)
        } catch {
            logger.error("sync failed: \(oneLine(error))")
        }
    }

    /// Watches the local sources' paths (replacing what was watched).
    private func watch(_ setup: DaemonSetup, watcher: SourceWatcher?) {
        guard let watcher else { return }
        let context = setup.context
        guard !context.config.sources.isEmpty, let sources = try? context.configuredSources() else {
            watcher.watch([])
            return
        }
        watch(sources, watcher: watcher)
    }

    private func watch(_ sources: [any ContactSourceType], watcher: SourceWatcher?) {
        guard let watcher else { return }
        for problem in watcher.watch(sources.flatMap(\.watchedPaths)) {
            logger.warning("cannot watch \(problem); changes there are seen at the next start or SIGHUP")
        }
    }

    /// `[export] ics = "PATH"`: writes the calendar when what it holds changed
    /// since the last write (a sync, a reload, a new day). The check runs only
    /// when the loop wakes anyway; it never sets a timer of its own.
    private func exportCalendar(_ setup: DaemonSetup, now: Int64, last: inout String?) {
        guard let path = ICSExport.configuredPath(context: setup.context) else { return }
        do {
            let context = setup.context
            let today = context.clock.localDate(at: now)
            let body = try ICSExport.render(context: context, store: store, today: today, stamp: 0)
            guard body != last || !FileManager.default.fileExists(atPath: path) else { return }
            try AtomicFile.write(ICSExport.render(context: context, store: store, today: today, stamp: now), to: path,
                                 what: "the calendar", mode: 0o644, makingFolder: true)
            last = body
            logger.info("wrote the calendar \(path)")
        } catch {
            logger.error("calendar export failed: \(oneLine(error))")
        }
    }

    /// The earliest time a configured source wants a sync by the clock
    /// (`SourceSync.nextAttempt`: its interval, or a failure's retry), leaving
    /// out the ones syncing now; nil when none does (vdir and file sources).
    private func nextSourceSync(_ setup: DaemonSetup, _ syncs: DaemonSourceSyncs, now: Int64) -> Int64? {
        let running = syncs.running
        guard !setup.context.config.sources.isEmpty, let sources = try? setup.context.configuredSources() else { return nil }
        return sources.filter { !running.contains($0.id) }.compactMap { nextClockSync(of: $0, syncs, now: now) }.min()
    }

    /// When the clock makes `source` due (`SourceSync.nextAttempt`), but never
    /// sooner than `DaemonSourceSyncs.minimumGap` after its last start: should
    /// the store fail to keep a failure's retry, the source is still not asked in a loop.
    private func nextClockSync(of source: any ContactSourceType, _ syncs: DaemonSourceSyncs, now: Int64) -> Int64? {
        guard let next = SourceSync.nextAttempt(of: source, store: store, now: now) else { return nil }
        return max(next, syncs.earliestClockStart(of: source.id, now: now))
    }

    /// Sends a `[health]` ping on its own thread, without waiting for it; a
    /// failure is one log line.
    private func ping(_ pinger: HealthPinger?, _ outcome: HealthOutcome) {
        guard let pinger else { return }
        let pings = pings, logger = logger
        Task {
            if let warning = try? await pings.run({ await pinger.ping(outcome) }) { logger.warning("\(warning)") }
        }
    }

    /// One round: contacts, lock, pass, unlock. Returns when to wake next, and
    /// the pass's report (nil when another dispatcher had the lock).
    private func pass(_ setup: DaemonSetup, now: Int64) async throws -> (Int64?, DispatchReport?) {
        let dispatcher = setup.wiring.dispatcher
        let contacts = try store.plannableContacts(for: dispatcher.planner)
        guard let lock = try await dispatchLock(setup) else {
            logger.notice("another dispatcher is delivering from \(setup.context.dataDirectory); trying again in \(Self.busyRetryDelay) s")
            let planned = try setup.wiring.nextWake(contacts: contacts, now: now)
            return (min(planned ?? .max, now + Self.busyRetryDelay), nil)
        }
        let report: DispatchReport
        do {
            defer { withExtendedLifetime(lock) {} }  // held while delivering, not while sleeping
            if requests.stopRequested { return (nil, nil) }
            await runActions(setup, now: now)
            // Unseen notifications whose time has come become pending ledger rows, which this pass sends.
            try escalation(setup).run(now: now)
            let requests = self.requests
            report = try await delivery.run {
                try await setup.wiring.pass(contacts: contacts, store: store, now: now, shouldStop: { requests.stopRequested })
            }
        }
        log(report, contacts: contacts)
        let next = try setup.wiring.nextWake(contacts: contacts, now: now)  // reminders and digests
        if logger.logLevel <= .debug, let event = dispatcher.planner.upcoming(contacts, now: now, limit: 1, recorded: try dispatcher.ledger.recorded(around: now, planner: dispatcher.planner, contacts: contacts)).first {
            logger.debug("next reminder: \(event.name), \(event.occurrence) (\(event.offsetDays) day(s) before) at \(setup.context.clock.iso8601(event.fireAt))")
        }
        return (next, report)
    }

    /// Escalation of unseen desktop notifications, by the config in force.
    private func escalation(_ setup: DaemonSetup) -> UnseenEscalation {
        UnseenEscalation(store: store, ledger: setup.wiring.dispatcher.ledger, config: setup.context.config, logger: logger)
    }

    /// The dispatch lock: at once when free, else waited for (up to
    /// `delivery.lock_wait`) on a thread of its own, not the cooperative pool.
    private func dispatchLock(_ setup: DaemonSetup) async throws -> (any DeliveryLock)? {
        let ledger = setup.wiring.dispatcher.ledger
        if let lock = try ledger.deliveryLock(wait: 0) { return lock }
        let wait = setup.context.config.delivery.lockWait
        guard wait > 0 else { return nil }
        logger.info("another dispatcher holds the lock; waiting up to \(wait) s")
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(any DeliveryLock)?, any Error>) in
            Thread {
                continuation.resume(with: Result { try ledger.deliveryLock(wait: wait) })
            }.start()
        }
    }

    private func reloaded(from current: DaemonSetup) async -> DaemonSetup {
        do {
            let fresh = try reload()
            await current.wiring.shutdown()
            logger.info("reloaded \(fresh.context.configPath) and the templates")
            return fresh
        } catch {
            logger.error("reload failed, still running the previous config: \(oneLine(error))")
            return current
        }
    }

    /// One line per delivery; contact names only at debug level.
    private func log(_ report: DispatchReport, contacts: [PlanningContact]) {
        guard !report.deliveries.isEmpty else {
            logger.debug("nothing due")
            return
        }
        var names: [String: String] = [:]
        if logger.logLevel <= .debug {
            for contact in contacts { names[contact.id] = contact.name }
        }
        for delivery in report.deliveries {
            let what = "\(delivery.id) via \(delivery.channel)"
            let why = delivery.error.map { ": \(oneLine($0))" } ?? ""
            switch delivery.status {
            case .sent: logger.info("sent \(what)")
            case .retrying: logger.warning("not delivered, will retry \(what)\(why)")
            case .failed: logger.error("failed \(what)\(why)")
            default: logger.notice("\(delivery.status.rawValue) \(what)\(why)")
            }
            let reminderID = PlannedEvent.snoozed(delivery.id)?.base ?? delivery.id
            if let contactID = PlannedEvent.parse(reminderID)?.contactID, let name = names[contactID] {
                logger.debug("\(delivery.id) is \(name)'s")
            }
        }
        logger.info("pass: \(report.due) due, \(report.sent) sent, \(report.failed) failed, \(report.retrying) retrying, \(report.missed) missed, \(report.skipped) skipped")
    }
}

/// An error as one log line.
private func oneLine(_ error: any Error) -> String {
    oneLine((error as? CLIError)?.message ?? "\(error)")
}

private func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).joined(separator: " ")
}

/// The daemon's `[health]` state: which outcome the monitor last heard and
/// when, so an idle daemon pings again every `ping_every`.
struct HealthPings {
    private(set) var pinger: HealthPinger?
    private var lastPing: Int64?
    private var lastOutcome: HealthOutcome?

    init(_ setup: DaemonSetup) {
        pinger = HealthPinger(config: setup.context.config, environment: setup.context.environment)
    }

    /// After a reload: the new `[health]` table (the last outcome is kept).
    mutating func reconfigure(_ setup: DaemonSetup) {
        pinger = HealthPinger(config: setup.context.config, environment: setup.context.environment)
    }

    /// What to ping after a pass, nil for no ping: a pass that had something
    /// due is reported as it went; one with nothing due (an idle wake) repeats
    /// the last outcome, once `ping_every` has passed since the last ping (or
    /// at the daemon's first pass).
    mutating func afterPass(_ report: DispatchReport, now: Int64) -> HealthOutcome? {
        guard let pinger else { return nil }
        if report.due > 0 {
            lastOutcome = report.healthOutcome("run")
        } else if let lastPing, now >= lastPing, now < lastPing + Int64(pinger.pingEvery) {  // (a clock set back pings at once)
            return nil
        }
        lastPing = now
        let outcome = lastOutcome ?? report.healthOutcome("run")
        lastOutcome = outcome
        return outcome
    }

    /// When an idle daemon pings next; nil without `[health]` (no wake of ours then).
    var nextPing: Int64? {
        guard let pinger, let lastPing else { return nil }
        return lastPing + Int64(pinger.pingEvery)
    }
}
