import ArgumentParser
import BirthdayBuzz
import BuzzChannels
import CurlSupport
import Foundation

/// One `buzz send`: what it sends and through which channels.
///
/// `buzz send` is the command people time against `notify-send` and Apprise, and
/// argument-parser's first parse reflects over every command of the tool, which
/// costs about as much as the send itself. So `Buzz.main` first tries
/// `init?(arguments:)`, a strict reader of the plain form
///
///     [GLOBAL…] send [--channel NAME]… [--title T] [GLOBAL…] [--] BODY
///
/// (each option as `--name value` or `--name=value`; GLOBAL is `--config`,
/// `--data-dir`, `--now`). It accepts nothing argument-parser would read
/// differently: anything else — help, a short flag, an unknown option, a value
/// that starts with `-`, a repeated single option, a bad `--now`, a missing or
/// second BODY — returns nil, and the ordinary parser handles the command line
/// and reports its usage errors.
struct SendRequest {
    /// The title when `--title` is not given.
    static let defaultTitle = "BirthdayBuzz"

    let global: GlobalSettings
    let channels: [String]
    let title: String
    let body: String

    init(global: GlobalSettings, channels: [String], title: String, body: String) {
        self.global = global
        self.channels = channels
        self.title = title
        self.body = body
    }

    init?(arguments: [String]) {
        guard let line = PlainCommandLine(arguments, command: "send", valueOptions: ["--channel", "--title"]),
              line.flags.isEmpty, line.positionals.count == 1 else { return nil }
        var title: String?
        var channels: [String] = []
        for (name, value) in line.values {
            if name == "--channel" {
                channels.append(value)
            } else {
                // A repeated single option is the ordinary parser's call.
                guard title == nil else { return nil }
                title = value
            }
        }
        self.init(global: line.global, channels: channels, title: title ?? Self.defaultTitle, body: line.positionals[0])
    }

    /// `buzz send` as the whole process (`Buzz.main`): `run` on the main thread
    /// alone (`BlockingExecutor.runOnCallingThread`); returns the exit status.
    ///
    /// The async `run` started three threads (Swift's pool two, libdispatch its
    /// timer) and a transfer on a `CurlSession`'s queue a fourth, and the command
    /// hopped between them. On this project's 2-vCPU virtual machine a thread
    /// woken on the idle vCPU starts 1.5–3.9 ms later (a C test: `pthread_create`
    /// to the thread's first instruction, after 20 ms idle), so every hop could
    /// cost more than the work; the `curl` CLI starts none. Loading libcurl on a
    /// second thread while the config is read was tried again this way (from
    /// `main`, and from a C constructor before the Swift runtime starts): it gained
    /// nothing measurable, as the loader thread starts late and the two threads'
    /// page faults and the loader's lock slow each other (CurlLibrary.swift).
    func runAsProcess() -> Int32 {
        BlockingExecutor.runOnCallingThread { await Buzz.exitStatus { try await self.run() } }
    }

    /// Sends the message through each channel: `send` as docs/design/command-line.md has it (a random
    /// message id, no ledger, no retry; exit 1 with one line per failure).
    func run() async throws {
        // No database, no contacts: a cold `send` only reads the config (and
        // libcurl is loaded only when a channel needs it).
        let context = try Context(global)
        let wiring = ChannelWiring(context: context)
        let names = channels.isEmpty ? context.defaultChannels : channels
        let configs = try names.map(wiring.config(named:))
        let message = Message(kind: .message, id: "send/" + UUID().uuidString.lowercased(), title: title, body: body,
                              locale: context.config.general.locale)
        var failures: [String] = []
        for config in configs {
            switch wiring.build(config) {
            case .failure(let error):
                failures.append(error.message)
            case .success(let channel):
                do {
                    try await channel.deliver(message)
                } catch let error as DeliveryError {
                    failures.append(wiring.scrubber.scrub(error.message, channel: config.name) + (error.isTemporary ? " (temporary)" : ""))
                } catch {
                    failures.append(wiring.scrubber.scrub("\(config.name): \(error)", channel: config.name))
                }
                await channel.shutdown()
            }
        }
        for failure in failures { printError(failure) }
        if !failures.isEmpty { throw ExitCode(1) }
    }
}

/// A command line in the plain form `[GLOBAL…] COMMAND [OPTION…] [GLOBAL…] [--] [ARG…]`,
/// read without argument-parser: what the commands people run most often cold
/// (`send`, and `status` from a status bar) take, so they skip its reflection
/// over every command. Each option is `--name value` or `--name=value`; GLOBAL is
/// `--config`, `--data-dir`, `--now`. It accepts nothing argument-parser would
/// read differently: anything else — help, a short flag, an unknown option, a
/// value that starts with `-`, a repeated global or flag, a bad `--now` — gives
/// nil, and the ordinary parser handles the command line and its usage errors.
struct PlainCommandLine {
    var global = GlobalSettings()
    /// The command's own options with a value, in order (repeats kept).
    var values: [(name: String, value: String)] = []
    /// The command's own flags (each at most once), in order.
    ///
    /// Arrays, not sets, here and for the options: a `Set<String>` literal made the
    /// runtime build `Set<String>`'s metadata and look up `String: Hashable` by a
    /// scan of every conformance in the binary, ~0.3 ms of a cold `send` (perf).
    var flags: [String] = []
    var positionals: [String] = []

    init?(_ arguments: [String], command: String, valueOptions: [String] = [], flagOptions: [String] = []) {
        var sawCommand = false
        var onlyPositionals = false
        var index = 0

        /// The value of the option at `index` (`--name=value` or `--name value`),
        /// advancing past it; nil when it has none or it looks like an option.
        func value(_ token: String, _ name: String) -> String? {
            if token.count > name.count {
                return String(token.dropFirst(name.count + 1))
            }
            guard index + 1 < arguments.count else { return nil }
            let next = arguments[index + 1]
            guard !next.hasPrefix("-") else { return nil }
            index += 1
            return next
        }
        /// Sets a single-valued option once; a second time is the ordinary parser's call.
        func setOnce(_ slot: inout String?, _ new: String?) -> Bool {
            guard slot == nil, let new else { return false }
            slot = new
            return true
        }

        while index < arguments.count {
            let token = arguments[index]
            if onlyPositionals || !token.hasPrefix("-") {
                if !sawCommand {
                    guard token == command, !onlyPositionals else { return nil }
                    sawCommand = true
                } else {
                    positionals.append(token)
                }
                index += 1
                continue
            }
            if token == "--" {
                guard sawCommand else { return nil }
                onlyPositionals = true
                index += 1
                continue
            }
            let name = token.split(separator: "=", maxSplits: 1).first.map(String.init) ?? token
            switch name {
            case "--config":
                guard setOnce(&global.config, value(token, name)) else { return nil }
            case "--data-dir":
                guard setOnce(&global.dataDir, value(token, name)) else { return nil }
            case "--now":
                guard setOnce(&global.now, value(token, name)), let now = global.now, PinnedNow(now) != nil else {
                    return nil
                }
            case _ where sawCommand && valueOptions.contains(name):
                guard let found = value(token, name) else { return nil }
                values.append((name, found))
            case _ where sawCommand && flagOptions.contains(name):
                guard token == name, !flags.contains(name) else { return nil }
                flags.append(name)
            default:
                return nil
            }
            index += 1
        }
        guard sawCommand else { return nil }
    }
}
