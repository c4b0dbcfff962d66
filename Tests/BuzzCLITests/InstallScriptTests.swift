import BuzzTestKit
import Foundation
import Testing

/// `scripts/install.sh --bin` and `scripts/uninstall.sh` into a temporary prefix
/// (with the debug binary: the release build the script makes by default is
/// slow): the desktop entry validates, the manual renders and names every
/// command, the completions load, and uninstall leaves the prefix as it was.
@Suite struct InstallScriptTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.currentDirectoryURL = URL(fileURLWithPath: repo)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// Every file and folder under `root`, relative, sorted.
    static func listing(_ root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).sorted()
    }

    static var required: Bool { ProcessInfo.processInfo.environment["BUZZ_REQUIRE_SERVERS"] == "1" }
    static let hasTools = required || FileManager.default.isExecutableFile(atPath: "/usr/bin/desktop-file-validate")

    @Test(.enabled(if: hasTools, "needs desktop-file-utils (scripts/deps.sh test)"))
    func installIntoATemporaryPrefixAndUninstall() throws {
        let binary = try #require(BuzzBinary.path)
        let sandbox = try Sandbox()
        let prefix = sandbox.root + "/prefix"
        // Something of the user's own in the prefix stays as it is.
        let mine = try sandbox.write("prefix/share/applications/mine.desktop", "[Desktop Entry]\n")
        let before = Self.listing(prefix)

        let installed = try Self.run(["bash", "scripts/install.sh", "--prefix", prefix, "--bin", binary])
        #expect(installed.status == 0, "\(installed)")
        #expect(FileManager.default.isExecutableFile(atPath: prefix + "/bin/buzz"))
        let again = try Self.run(["bash", "scripts/install.sh", "--prefix", prefix, "--bin", binary])
        #expect(again.status == 2 && again.err.contains("uninstall.sh"), "\(again)")

        let desktop = prefix + "/share/applications/birthdaybuzz.desktop"
        let validated = try Self.run(["desktop-file-validate", desktop])
        #expect(validated.status == 0 && !validated.out.contains("error"), "\(validated)")
        #expect(try String(contentsOfFile: desktop, encoding: .utf8).contains("Icon=birthdaybuzz"))
        #expect(FileManager.default.fileExists(atPath: prefix + "/share/icons/hicolor/scalable/apps/birthdaybuzz.svg"))

        let manual = try Self.run(["man", "-l", prefix + "/share/man/man1/buzz.1"], environment: ["MANWIDTH": "100", "MANPAGER": "cat"])
        #expect(manual.status == 0 && manual.err.isEmpty, "\(manual.err)")
        for section in ["NAME", "SYNOPSIS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES"] {
            #expect(manual.out.contains("\n" + section + "\n"), "\(section)")
        }
        // The committed page names every command: scripts/generate-manual.sh was run.
        let help = try Self.run([binary, "--help"])
        let commands = help.out.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0 != "See" } ?? []
        #expect(commands.count > 20, "\(help.out)")
        for command in commands where !command.hasPrefix("'") {
            #expect(manual.out.contains(command), "buzz.1 lacks \(command): run scripts/generate-manual.sh")
        }

        let bash = try Self.run(["bash", "-c", "source \(prefix)/share/bash-completion/completions/buzz; complete -p buzz"])
        #expect(bash.status == 0 && bash.out.contains("buzz"), "\(bash)")
        #expect(try String(contentsOfFile: prefix + "/share/zsh/site-functions/_buzz", encoding: .utf8).hasPrefix("#compdef buzz"))
        #expect(try String(contentsOfFile: prefix + "/share/fish/vendor_completions.d/buzz.fish", encoding: .utf8).contains("complete -c 'buzz'"))
        let unit = try String(contentsOfFile: prefix + "/share/systemd/user/birthdaybuzz.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix)/bin/buzz run"), "\(unit)")
        #expect(FileManager.default.fileExists(atPath: prefix + "/share/systemd/user/birthdaybuzz-tick.timer"))

        let removed = try Self.run(["bash", "scripts/uninstall.sh", "--prefix", prefix])
        #expect(removed.status == 0 && removed.err.isEmpty, "\(removed)")
        #expect(Self.listing(prefix) == before)
        #expect(FileManager.default.fileExists(atPath: mine))

        // Into a prefix that does not exist yet: uninstall removes it again.
        let fresh = sandbox.root + "/fresh/prefix"
        #expect(try Self.run(["bash", "scripts/install.sh", "--prefix", fresh, "--bin", binary]).status == 0)
        #expect(try Self.run(["bash", "scripts/uninstall.sh", "--prefix", fresh]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(FileManager.default.fileExists(atPath: sandbox.root + "/fresh"))
    }

    /// `install.sh --from` installs a tarball as scripts/package.sh makes it (a
    /// prefix in one folder) without building: here a tiny fake prefix, whose
    /// bin/buzz is a shell script, so the test needs no release build. The
    /// units are rewritten for the prefix, uninstall removes it all, and a
    /// tarball holding a link (which could point anywhere) is refused.
    @Test func installFromATarballWithoutBuilding() throws {
        let sandbox = try Sandbox()
        let top = "fake/birthdaybuzz-9.9.9-linux-test/"
        try sandbox.write(top + "bin/buzz", "#!/bin/sh\necho 'buzz 9.9.9 (fake)'\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sandbox.root + "/" + top + "bin/buzz")
        try sandbox.write(top + "share/man/man1/buzz.1", ".TH BUZZ 1\n")
        try sandbox.write(top + "share/systemd/user/birthdaybuzz.service", "[Service]\nExecStart=%h/.local/bin/buzz run\n")
        try sandbox.write(top + "share/doc/birthdaybuzz/copyright", "fake\n")
        let tarball = sandbox.root + "/fake.tar.gz"
        let packed = try Self.run(["tar", "-czf", tarball, "-C", sandbox.root + "/fake", "birthdaybuzz-9.9.9-linux-test"])
        #expect(packed.status == 0, "\(packed)")

        let prefix = sandbox.root + "/prefix"
        let mine = try sandbox.write("prefix/bin/mine", "mine\n")
        let before = Self.listing(prefix)
        let both = try Self.run(["bash", "scripts/install.sh", "--prefix", prefix, "--from", tarball, "--bin", "/bin/true"])
        #expect(both.status == 2 && both.err.contains("exclude"), "\(both)")

        let installed = try Self.run(["bash", "scripts/install.sh", "--prefix", prefix, "--from", tarball])
        #expect(installed.status == 0, "\(installed)")
        let version = try Self.run([prefix + "/bin/buzz", "--version"])
        #expect(version.out == "buzz 9.9.9 (fake)\n", "\(version)")
        let unit = try String(contentsOfFile: prefix + "/share/systemd/user/birthdaybuzz.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix)/bin/buzz run"), "\(unit)")
        #expect(FileManager.default.fileExists(atPath: prefix + "/share/doc/birthdaybuzz/copyright"))
        let manifest = try String(contentsOfFile: prefix + "/share/birthdaybuzz/install-manifest", encoding: .utf8)
        #expect(manifest.contains("file share/man/man1/buzz.1\n") && !manifest.contains("mine"), "\(manifest)")

        let removed = try Self.run(["bash", "scripts/uninstall.sh", "--prefix", prefix])
        #expect(removed.status == 0 && removed.err.isEmpty, "\(removed)")
        #expect(Self.listing(prefix) == before)
        #expect(FileManager.default.fileExists(atPath: mine))

        // A link in the tarball: refused, nothing installed.
        _ = try Self.run(["ln", "-s", "/etc/passwd", sandbox.root + "/" + top + "share/doc/birthdaybuzz/link"])
        let linked = sandbox.root + "/linked.tar.gz"
        #expect(try Self.run(["tar", "-czf", linked, "-C", sandbox.root + "/fake", "birthdaybuzz-9.9.9-linux-test"]).status == 0)
        let refused = try Self.run(["bash", "scripts/install.sh", "--prefix", prefix, "--from", linked])
        #expect(refused.status == 2 && refused.err.contains("neither a file nor a folder"), "\(refused)")
        #expect(Self.listing(prefix) == before)
        let notOurs = try Self.run(["bash", "scripts/install.sh", "--prefix", prefix, "--from", sandbox.root + "/nothing.tar.gz"])
        #expect(notOurs.status == 2 && notOurs.err.contains("is not a file"), "\(notOurs)")
    }
}
