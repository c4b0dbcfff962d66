import BuzzTestKit
import Foundation
import Testing

/// File descriptors: a pass over many webhook channels keeps only a few
/// connections open, and running out of descriptors is reported as that, not
/// as "Couldn't connect to server".
@Suite(.timeLimit(.minutes(2)),
       .enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
struct FileDescriptorTests {
    /// Runs buzz under `ulimit -n limit`, with nothing but stdin, stdout and
    /// stderr open (descriptors the test process holds are closed first).
    static func runLimited(_ sandbox: Sandbox, limit: Int, _ arguments: [String]) async throws -> ProcessOutput {
        let binary = try #require(BuzzBinary.path, "buzz binary not found: build it or set BUZZ_BIN")
        let script = """
            for fd in $(ls /proc/$$/fd); do
                if [ "$fd" -gt 2 ] && [ -e /proc/$$/fd/$fd ]; then eval "exec $fd>&-"; fi
            done
            ulimit -n "$1" || exit 99
            shift
            exec "$@"
            """
        let environment = sandbox.environment.map { "\($0.key)=\($0.value)" }
        return try await runProgram("/bin/bash", ["-c", script, "bash", String(limit), "/usr/bin/env", "-i"] + environment
                                    + [binary, "--data-dir", sandbox.dataDir] + arguments)
    }

    static func config(sink: URL, channels count: Int) -> String {
        var text = """
            [general]
            timezone = "UTC"
            locale = "en"
            [reminders]
            channels = [\((0..<count).map { "\"h\($0)\"" }.joined(separator: ", "))]

            """
        for index in 0..<count {
            text += """
                [channels.h\(index)]
                type = "webhook"
                url = "\(sink.absoluteString)/hook/\(index)"
                timeout = "5s"

                """
        }
        return text
    }

    /// 60 webhook channels under `ulimit -n 64`: each used to keep ~3 descriptors
    /// for the whole pass, and the later ones failed with "Couldn't connect to server".
    @Test func manyWebhookChannelsFitALowDescriptorLimit() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(sink: base, channels: 60))
        chmod(sandbox.configPath, 0o600)
        let file = try sandbox.write("contacts.vcf", VCard.card(uid: "u1", name: "Ada", bday: "1990-03-15"))
        #expect(try await sandbox.run(["import", file, "--now", "2027-01-01"]).status == 0)
        #expect(try await sandbox.run(["tick", "--now", "2027-01-02T00:00Z"]).status == 0)
        let tick = try await Self.runLimited(sandbox, limit: 64, ["tick", "--now", "2027-03-14T09:00Z", "--json"])
        #expect(tick.status == 0, "\(tick)")
        #expect(tick.stdout.contains("\"sent\":60"), "\(tick)")
        #expect(try await sink.requests().count == 60)
    }

    /// Out of descriptors, a send says so ("too many open files", with the
    /// limit), never "Couldn't connect to server". Which limit runs out exactly
    /// at the connection depends on the build, so a range of limits is tried:
    /// from 4 (0–2 and one more; below that the loader cannot open libsqlite3),
    /// as a plain `send` starts no thread of libdispatch's and so opens none of
    /// its epoll, eventfd and timerfd descriptors (it runs out at 5).
    @Test func runningOutOfDescriptorsIsReportedAsSuch() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        let sandbox = try Sandbox()
        try sandbox.writeConfig(Self.config(sink: base, channels: 1))
        chmod(sandbox.configPath, 0o600)
        var outputs: [ProcessOutput] = []
        for limit in 4...24 {
            outputs.append(try await Self.runLimited(sandbox, limit: limit, ["send", "--channel", "h0", "hello"]))
        }
        let all = outputs.map(\.description).joined(separator: "\n")
        #expect(!all.contains("Couldn't connect") && !all.contains("apt-get install"), "\(all)")
        let exhausted = outputs.filter { $0.stderr.contains("too many open files") }
        #expect(!exhausted.isEmpty, "no limit ran out at the connection:\n\(all)")
        for output in exhausted {
            #expect(output.status == 1 && output.stderr.contains("h0: ") && output.stderr.contains("the limit is "), "\(output)")
        }
        #expect(outputs.last?.status == 0, "\(all)")
    }
}
