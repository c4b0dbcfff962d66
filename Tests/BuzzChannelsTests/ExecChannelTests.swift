#if canImport(Glibc)
import Glibc
import BuzzTestKit
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import BirthdayBuzz
import BuzzChannels
import BuzzProcess

/// The `exec` channel and its `ProgramRunner`, with real child processes:
/// `#!/bin/sh` plugins written to a private temporary folder by each test.
@Suite(.enabled(if: ServerGate.allows(.exec), "exec plugin tests need /bin/sh"), .timeLimit(.minutes(1)))
struct ExecChannelTests {
    // MARK: Outcomes

    @Test func pluginReceivesTheGenericPayloadOnStandardInput() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("record", #"cat > "$1""#)
        let received = sandbox.path("stdin.json")
        let channel = sandbox.channel([plugin, received])

        try await channel.deliver(Self.message)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: received))
        // Pinned byte for byte: plugins parse this (docs/design/channels.md).
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"event":"birthday.reminder","id":"c1/0/2025-03-04","title":"Ada's birthday","body":"Ada O'Brien turns 36 today — say \"hi\"\nsecond line","contact":{"id":"c1","name":"Ada O'Brien"},"occurrence":"2025-03-04","days_until":0,"locale":"en","to":"+4366012345"}"# + "\n")
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(object["event"] as? String == "birthday.reminder")
        #expect(object["id"] as? String == "c1/0/2025-03-04")
        #expect(object["title"] as? String == "Ada's birthday")
        #expect(object["body"] as? String == "Ada O'Brien turns 36 today — say \"hi\"\nsecond line")
        #expect(object["occurrence"] as? String == "2025-03-04")
        #expect(object["days_until"] as? Int == 0)
        #expect((object["contact"] as? [String: Any])?["name"] as? String == "Ada O'Brien")
        #expect(object["to"] as? String == "+4366012345")
    }

    @Test func exitZeroIsDelivered() async throws {
        let sandbox = try Sandbox()
        let channel = sandbox.channel([try sandbox.script("ok", "cat > /dev/null\nexit 0")])
        try await channel.deliver(Self.message)
    }

    @Test func exitSeventyFiveIsTemporary() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("down", "echo 'gateway unreachable' >&2\nexit 75")
        let error = try await Self.deliveryError(sandbox.channel([plugin], name: "sms"))
        #expect(error.isTemporary)
        #expect(error.message.contains("exec channel \"sms\""))
        #expect(error.message.contains("75"))
        #expect(error.message.hasSuffix("gateway unreachable"))
    }

    @Test func otherExitIsPermanentWithLastStandardErrorLine() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("fails", """
            echo 'starting up' >&2
            printf 'no such device: pixel\\r\\n\\n   \\n' >&2
            exit 3
            """)
        let error = try await Self.deliveryError(sandbox.channel([plugin], name: "sms"))
        #expect(!error.isTemporary)
        #expect(error.message == "exec channel \"sms\": \(plugin) exited with status 3: no such device: pixel")
    }

    @Test func longErrorLineIsCutToOneShortLine() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("verbose", "printf '%0500d\\n' 7 >&2\nexit 1")
        let error = try await Self.deliveryError(sandbox.channel([plugin]))
        #expect(!error.message.contains("\n"))
        #expect(error.message.hasSuffix("0…"))
        #expect(error.message.count < 200 + 120 + plugin.count)
    }

    @Test func secretsEchoedByThePluginAreScrubbed() async throws {
        let sandbox = try Sandbox()
        let scrubber = SecretScrubber()
        scrubber.register("tok-9f8e7d6c5b4a")
        let plugin = try sandbox.script("leaky", "echo \"401 for token tok-9f8e7d6c5b4a, go away\" >&2\nexit 1")
        let error = try await Self.deliveryError(sandbox.channel([plugin], scrubber: scrubber))
        #expect(!error.message.contains("tok-9f8e7d6c5b4a"))
        #expect(error.message.hasSuffix("401 for token ***, go away"))
    }

    @Test func tokensFromTheEnvTableAreScrubbed() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("leaky-env", "echo \"rejected token $API_TOKEN\" >&2\nexit 1")
        let channel = ExecChannel(name: "plugin", options: ExecChannel.Options(command: [plugin],
                                                                             environment: [("API_TOKEN", "env-tok-12345678")]),
                                  timeout: 20, configDirectory: sandbox.directory, scrubber: SecretScrubber())
        let error = try await Self.deliveryError(channel)
        #expect(error.message.hasSuffix("rejected token ***"), "\(error)")
    }

    @Test func deathBySignalIsTemporary() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("crash", "kill -KILL $$")
        let error = try await Self.deliveryError(sandbox.channel([plugin]))
        #expect(error.isTemporary)
        #expect(error.message.contains("signal 9 (SIGKILL)"))
    }

    @Test func timeoutStopsTheWholeProcessGroup() async throws {
        let sandbox = try Sandbox()
        let pidFile = sandbox.path("grandchild.pid")
        let plugin = try sandbox.script("slow", """
            sleep 300 &
            echo $! > "$1"
            sleep 240
            wait
            """)
        let started = ContinuousClock.now
        let error = try await Self.deliveryError(sandbox.channel([plugin, pidFile], timeout: 1))
        #expect(error.isTemporary)
        #expect(error.message.contains("did not finish within 1 s"))
        // Stopped long before the script's own end (generous: the machine may be busy).
        #expect(ContinuousClock.now - started < .seconds(120))

        let text = try String(contentsOfFile: pidFile, encoding: .utf8)
        let grandchild = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await Self.becomesDead(grandchild), "the plugin's background sleep survived the timeout")
    }

    // MARK: Environment and output

    @Test func pluginGetsMinimalEnvironmentPlusItsOwnTable() async throws {
        setenv("BUZZ_SECRET_TEST", "must-not-leak", 1)
        let sandbox = try Sandbox()
        let dump = sandbox.path("env.txt")
        let plugin = try sandbox.script("env", #"env > "$1""#)
        let channel = ExecChannel(name: "env",
                                  options: ExecChannel.Options(command: [plugin, dump],
                                                              environment: [("PLUGIN_TOKEN", "abc 123"), ("ZZ_MODE", "test")]),
                                  timeout: 10, configDirectory: sandbox.directory, scrubber: SecretScrubber())
        try await channel.deliver(Self.message)

        let lines = Set(try String(contentsOfFile: dump, encoding: .utf8).split(separator: "\n").map(String.init))
        let parent = ProcessInfo.processInfo.environment
        #expect(lines.contains("PATH=\(parent["PATH"] ?? ProgramRunner.defaultSearchPath)"))
        if let home = parent["HOME"] { #expect(lines.contains("HOME=\(home)")) }
        if let lang = parent["LANG"] { #expect(lines.contains("LANG=\(lang)")) }
        #expect(lines.contains("PLUGIN_TOKEN=abc 123"))
        #expect(lines.contains("ZZ_MODE=test"))
        #expect(!lines.contains { $0.hasPrefix("BUZZ_SECRET_TEST=") })
    }

    @Test func runnerEnvironmentIsExactlyPathHomeLangAndExtras() throws {
        let runner = ProgramRunner(arguments: ["/usr/bin/env"], extraEnvironment: [("EXTRA", "1"), ("LANG", "C.UTF-8")],
                                   timeout: 10,
                                   parentEnvironment: ["PATH": "/usr/bin:/bin", "HOME": "/home/ada",
                                                       "LANG": "de_AT.UTF-8", "MAIL_PASSWORD": "hunter22"])
        let result = try runner.runSynchronously()
        #expect(result.succeeded)
        let lines = String(decoding: result.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines == ["PATH=/usr/bin:/bin", "HOME=/home/ada", "LANG=C.UTF-8", "EXTRA=1"])
    }

    @Test func hugeOutputDoesNotHang() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("chatty", """
            head -c 10000000 /dev/zero
            head -c 10000000 /dev/zero >&2
            echo 'done' >&2
            """)
        try await sandbox.channel([plugin]).deliver(Self.message)

        let result = try await ProgramRunner(arguments: [plugin], timeout: 30).run()
        #expect(result.succeeded)
        #expect(result.standardOutput.count == 64 * 1024)
        #expect(result.standardOutputTruncated)
        #expect(result.standardError.count == 64 * 1024)
        #expect(result.lastErrorLine == "done")
    }

    @Test func programThatReadsNoInputCannotKillUs() async throws {
        // A megabyte of input to a program that exits at once: writes fail with EPIPE, never SIGPIPE.
        let result = try await ProgramRunner(arguments: ["/bin/sh", "-c", "exit 0"], timeout: 10)
            .run(standardInput: [UInt8](repeating: 0x41, count: 1 << 20))
        #expect(result.succeeded)
    }

    @Test func withoutInputStandardInputIsEmptyAndSignalsAreDefault() throws {
        // password_command style: no input (EOF at once, no hang), synchronous. The child's
        // SIGPIPE is back to default although we ignore it: `yes` dies quietly.
        let runner = ProgramRunner(arguments: ["/bin/sh", "-c", "cat; yes | head -n 1; echo secret-password"], timeout: 10)
        let result = try runner.runSynchronously()
        #expect(result.succeeded)
        #expect(String(decoding: result.standardOutput, as: UTF8.self) == "y\nsecret-password\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func descriptorsOfThisProcessAreNotInherited() throws {
        let sandbox = try Sandbox()
        let marker = sandbox.path("leak-marker")
        let fd = open(marker, O_WRONLY | O_CREAT, 0o600)  // deliberately without O_CLOEXEC
        try #require(fd >= 0)
        defer { close(fd) }
        let result = try ProgramRunner(arguments: ["/bin/sh", "-c", "ls -l /proc/$$/fd/"], timeout: 10).runSynchronously()
        #expect(result.succeeded)
        #expect(!String(decoding: result.standardOutput, as: UTF8.self).contains("leak-marker"))
    }

    @Test func cancellingTheTaskStopsTheProgram() async throws {
        let sandbox = try Sandbox()
        let marker = sandbox.path("started")
        let started = ContinuousClock.now
        let task = Task {
            // The program says it has started (a file), then sleeps far longer than the test.
            try await ProgramRunner(arguments: ["/bin/sh", "-c", ": > \"$0\"; exec sleep 300", marker], timeout: 400).run()
        }
        // Cancelled once it runs: polled, so the wait ends as soon as it has started.
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: marker), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(FileManager.default.fileExists(atPath: marker), "the program never started")
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Long before the program's own end (generous: the machine may be busy).
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    // MARK: Refusals

    @Test func groupOrOtherWritableConfigFolderIsRefused() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("ok", "exit 0")
        let config = sandbox.path("config")
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: false)
        for mode: mode_t in [0o770, 0o707, 0o777] {
            chmod(config, mode)
            let channel = ExecChannel(name: "sms", options: ExecChannel.Options(command: [plugin]), timeout: 10,
                                      configDirectory: config, scrubber: SecretScrubber())
            let error = try await Self.deliveryError(channel)
            #expect(!error.isTemporary)
            #expect(error.message == "exec channel \"sms\": refusing to run programs named in \(config): it is writable by group or others; fix: chmod go-w \(config)")
            await #expect(throws: DeliveryError.self) { try await channel.validate() }
        }
        chmod(config, 0o755)
        try await ExecChannel(name: "sms", options: ExecChannel.Options(command: [plugin]), timeout: 10,
                              configDirectory: config, scrubber: SecretScrubber()).validate()
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a folder to another user"))
    func configFolderOwnedByAnotherUserIsRefused() throws {
        let sandbox = try Sandbox()
        let config = sandbox.path("theirs")
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: false)
        chmod(config, 0o755)
        try #require(chown(config, 65534, 65534) == 0)
        #expect {
            try ProgramRunner.checkTrusted(directory: config)
        } throws: { error in
            "\(error)".contains("owned by uid 65534") && "\(error)".contains("fix: chown 0 \(config)")
        }
    }

    @Test func missingProgramIsPermanentAndNamed() async throws {
        let sandbox = try Sandbox()
        for program in ["/nonexistent/buzz-plugin", "buzz-no-such-plugin"] {
            let channel = sandbox.channel([program, "--flag"])
            let error = try await Self.deliveryError(channel)
            #expect(!error.isTemporary)
            #expect(error.message.contains("cannot run program \"\(program)\""))
            await #expect(throws: DeliveryError.self) { try await channel.validate() }
        }
    }

    @Test func nonExecutableProgramIsPermanent() async throws {
        let sandbox = try Sandbox()
        let plugin = try sandbox.script("plain", "exit 0")
        chmod(plugin, 0o600)
        let error = try await Self.deliveryError(sandbox.channel([plugin]))
        #expect(!error.isTemporary)
        #expect(error.message.contains("not executable"))
    }

    @Test func validateFindsProgramsInPath() async throws {
        let sandbox = try Sandbox()
        try await sandbox.channel(["sh", "-c", "exit 0"]).validate()
        #expect(throws: ProgramError.self) {
            try ProgramRunner.resolve("sh", searchPath: ":relative/bin")
        }
        #expect(try ProgramRunner.resolve("sh", searchPath: "/nonexistent:/bin") == "/bin/sh")
    }

    // MARK: Helpers

    static let message = Message(
        kind: .reminder, id: "c1/0/2025-03-04", title: "Ada's birthday",
        body: "Ada O'Brien turns 36 today — say \"hi\"\nsecond line",
        contact: .init(id: "c1", name: "Ada O'Brien"), occurrence: LocalDate(year: 2025, month: 3, day: 4),
        daysUntil: 0, locale: "en", recipient: .phone("+4366012345"))

    static func deliveryError(_ channel: ExecChannel) async throws -> DeliveryError {
        do {
            try await channel.deliver(message)
        } catch let error as DeliveryError {
            return error
        }
        Issue.record("delivery succeeded but should have failed")
        return DeliveryError.permanent("")
    }

    /// Whether `pid` is gone (or a zombie nobody reaped) within a few seconds.
    static func becomesDead(_ pid: pid_t) async -> Bool {
        for _ in 0..<50 {
            if kill(pid, 0) != 0 { return true }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "Z" { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// A private (0700) temporary folder holding the test's plugins; removed when the test ends.
    final class Sandbox {
        let directory: String

        init() throws {
            var template = Array((TestFolders.temporary.path + "/buzz-exec-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
            directory = String(cString: made)
            chmod(directory, 0o700)
        }

        deinit {
            try? FileManager.default.removeItem(atPath: directory)
        }

        func path(_ name: String) -> String { directory + "/" + name }

        /// Writes an executable (0700) `#!/bin/sh` script and returns its path.
        func script(_ name: String, _ body: String) throws -> String {
            let file = path(name)
            try ("#!/bin/sh\n" + body + "\n").write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, 0o700)
            return file
        }

        func channel(_ command: [String], name: String = "plugin", timeout: Double = 20,
                     scrubber: SecretScrubber = SecretScrubber()) -> ExecChannel {
            ExecChannel(name: name, options: ExecChannel.Options(command: command), timeout: timeout,
                        configDirectory: directory, scrubber: scrubber)
        }
    }
}
