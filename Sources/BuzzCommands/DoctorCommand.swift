import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import BuzzFiles
import BuzzSources
import BuzzStore
import Foundation

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the config, the templates, the data dir, and that every channel's endpoint answers.")

    @ParentCommand var root: Buzz

    func run() async throws {
        // A config that does not load stops here with its one-line error (exit 2).
        let context = try Context(root.global)
        let wiring = ChannelWiring(context: context)
        var problems = 0
        func ok(_ text: String) { print("ok    " + OneLine.escaped(text)) }
        func warn(_ text: String) { print("warn  " + OneLine.escaped(text)) }
        func fail(_ text: String, channel: String? = nil) {
            print("FAIL  " + OneLine.escaped(wiring.scrubber.scrub(text, channel: channel)))
            problems += 1
        }

        if context.configFileExists {
            ok("config \(context.configPath): \(context.config.channels.count) channel(s), time zone \(Self.name(of: context.config.general.timeZone)), locale \(context.config.general.locale)")
            var info = stat()
            if stat(context.configPath, &info) == 0, info.st_mode & 0o044 != 0,
               Context.channelTypes.holdsInlineSecrets(context.config) || context.config.health?.ping.isInline == true {
                warn("\(context.configPath) is readable by others and holds a secret inline (a URL query or header value): chmod 600 it, or use url_env / { env = \"…\" }")
            }
        } else {
            ok("config: none at \(context.configPath); using the embedded defaults")
        }
        if let line = HealthPinger(config: context.config, environment: context.environment)?.doctorLine {
            // Only described: a ping from doctor would tell the monitor a pass went well.
            if line.ok { ok(line.text) } else { warn(line.text) }
        }

        // The shipped templates and the user's overrides, checked as `tick` and `ask` load them.
        do {
            _ = try MessageTemplates(overrideDirectories: context.templateDirectories)
            ok("templates: en, de, fr, es, with overrides from \(context.templateDirectories.joined(separator: " and ")) when there")
        } catch {
            fail("\(error)")
        }

        // Data dir: 0700, database opens. doctor does not create it.
        var info = stat()
        if stat(context.dataDirectory, &info) != 0 {
            if let problem = BuzzDatabase.creationProblem(context.dataDirectory) {
                fail("data dir \(context.dataDirectory) cannot be created (\(problem))")
            } else {
                ok("data dir \(context.dataDirectory) does not exist yet (made by the first import)")
            }
        } else {
            do {
                let store = try BuzzDatabase(directory: context.dataDirectory)
                var damage: [String]
                do {
                    damage = try store.quickCheck()
                } catch {
                    damage = ["\(error)".replacingOccurrences(of: store.path + ": ", with: "")]
                }
                if !damage.isEmpty {
                    let more = damage.count > 1 ? " (and \(damage.count - 1) more)" : ""
                    fail("data dir \(context.dataDirectory): \(store.path) is corrupt: \(damage[0])\(more); "
                         + "restore a backup, or move it aside and import again (decisions and the ledger are in it)")
                } else {
                    ok("data dir \(context.dataDirectory): database opens and passes quick_check")
                    // Reminders of the last week that reached nobody, each once.
                    let recent = try context.ledger(store).problems(firedAfter: context.now - StatusLine.problemWindow)
                    let names = try store.contactNames(ids: recent.map(\.contactID))
                    for problem in recent {
                        let name = names[problem.contactID] ?? problem.contactID
                        warn("not delivered: \(name)'s \(problem.occasion.rawValue) reminder for \(problem.occurrence) "
                             + "(\(problem.state.rawValue): \(problem.reason))"
                             + (problem.occasion == .birthday ? "; a late wish: buzz wish \(NoticeEntry.shellQuoted(name))" : ""))
                    }
                }
            } catch {
                fail("data dir \(context.dataDirectory): \(error)")  // a corrupt header or schema says so itself
            }
            if info.st_mode & 0o077 != 0 {
                let mode = String(info.st_mode & 0o777, radix: 8)
                warn("data dir \(context.dataDirectory) is readable by other users (mode \(mode); it holds your contacts): chmod 700 it")
            }
            if let problem = DispatchLock.problem(dataDirectory: context.dataDirectory) { fail(problem) }
        }

        // Every configured channel, and the built-ins that a route uses.
        let settings = context.config
        var used = Set(context.defaultChannels)
        for group in settings.groups { used.formUnion(group.channels ?? []) }
        if let sms = settings.ask.sms { used.insert(sms) }
        if let email = settings.ask.email { used.insert(email) }
        for config in settings.allChannels {
            guard context.config.channel(named: config.name) != nil || used.contains(config.name) else {
                print("skip  channel \(config.name) (built-in, not used by any route)")
                continue
            }
            let label = "channel \(config.name) (\(config.typeName), \(wiring.target(of: config)))"
            switch wiring.build(config) {
            case .failure(let error):
                fail("\(label): \(error.message)", channel: config.name)
            case .success(let channel):
                do {
                    try await channel.validate()
                    ok(label)
                } catch let error as DeliveryError {
                    fail("\(label): \(error.message)", channel: config.name)
                } catch {
                    fail("\(label): \(error)", channel: config.name)
                }
                await channel.shutdown()
            }
        }
        // Escalation when unseen needs `buzz run`, the one that hears the notification server: without
        // a daemon (a `tick` timer), a channel's escalate never happens. The pid file names a running one.
        let escalating = settings.channels.filter { channel in
            channel.typeName == DBusChannel.typeName && (try? DBusChannel.options(of: channel))?.escalate.isEmpty == false
        }
        if !escalating.isEmpty, RunPidFile.runningDaemon(dataDirectory: context.dataDirectory) == nil {
            for channel in escalating {
                warn("channel \(channel.name) sets escalate, but no buzz run daemon is running: only buzz run "
                     + "escalates an unseen notification (tick does not); start it, e.g. systemctl --user enable --now birthdaybuzz.service")
            }
        }
        // Every configured source: built (its options, its password), then asked
        // what `sync` would read (the folder, the file, the server's books).
        if !settings.sources.isEmpty {
            let store = stat(context.dataDirectory, &info) == 0 ? try? BuzzDatabase(directory: context.dataDirectory) : nil
            let sources: [any ContactSourceType]
            do {
                sources = try context.configuredSources()
            } catch {
                fail("sources: \(error)")
                sources = []
            }
            for source in sources {
                let label = "source \(source.label) (\(source.typeName))"
                var last = ""
                if let synced = (try? store?.sourceState(source.id, withState: false))??.syncedAt {
                    last = "; last synced " + context.clock.iso8601(synced)
                }
                do {
                    ok("\(label): \(try source.check())\(last)")
                } catch let error as SourceError {
                    fail("\(label): \(error.message)")
                } catch {
                    fail("\(label): \(error)")
                }
            }
        }
        if problems > 0 {
            print("\(problems) problem(s) found")
            throw ExitCode(1)
        }
        print("all good")
    }

    /// A zone as users write it: Foundation calls UTC "GMT".
    static func name(of zone: TimeZone) -> String {
        zone.identifier == "GMT" && zone.secondsFromGMT() == 0 ? "UTC" : zone.identifier
    }

}
