import BuzzTestKit
import Foundation
import Testing

/// `init`, usage errors, and file modes.
@Suite struct MiscCLITests {
    @Test func initWritesAConfigThatLoadsAndRefusesToOverwrite() async throws {
        let sandbox = try Sandbox()
        let first = try await sandbox.run(["init"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains(sandbox.configPath), "\(first)")
        let written = try String(contentsOfFile: sandbox.configPath, encoding: .utf8)
        #expect(written.contains("[reminders]"))

        let list = try await sandbox.run(["list"])
        #expect(list.status == 0, "the starter config loads: \(list)")
        let upcoming = try await sandbox.run(["upcoming", "--json"])
        #expect(upcoming.status == 0, "\(upcoming)")

        try Data((written + "\n# mine\n").utf8).write(to: URL(fileURLWithPath: sandbox.configPath))
        let second = try await sandbox.run(["init"])
        #expect(second.status == 2, "\(second)")
        #expect(second.stderr.contains(sandbox.configPath), "\(second)")
        #expect(try String(contentsOfFile: sandbox.configPath, encoding: .utf8).hasSuffix("# mine\n"), "left alone")

        let forced = try await sandbox.run(["init", "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try String(contentsOfFile: sandbox.configPath, encoding: .utf8) == written)
    }

    @Test func initHonoursConfigOption() async throws {
        let sandbox = try Sandbox()
        let path = sandbox.root + "/custom/buzz.toml"
        let result = try await sandbox.run(["init", "--config", path])
        #expect(result.status == 0, "\(result)")
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: sandbox.configPath))
        #expect(try await sandbox.run(["--config", path, "list"]).status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test(arguments: [["list", "--bogus"], ["--bogus", "list"], ["frobnicate"], ["set-birthday", "ann"],
                      ["include"], ["list", "--sort", "age"], ["upcoming", "--days"], ["upcoming", "--days", "-1"],
                      ["upcoming", "--limit", "0"], ["--now", "2027-3-28", "list"], ["set-birthday", "ann", "04-12", "05-12"]])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result)")
        // One line (docs/design/command-line.md), pointing at the command's help; no usage block.
        #expect(result.stderrLines.count == 1, "\(arguments): \(result)")
        #expect(result.stderr.contains("(see 'buzz") && result.stderr.contains("--help')"), "\(arguments): \(result)")
        #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("Error: "), "\(arguments): \(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataDir), "a usage error touches nothing")
    }

    @Test func helpExitsZero() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("upcoming"), "\(result)")
    }

    /// `buzz --version`: one line, `buzz <version> (<commit>)`, the commit from git
    /// at build time (this checkout has one), nothing on stderr.
    @Test func versionIsOneLineWithTheCommit() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--version"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let line = try Regex(#"^buzz [0-9]+\.[0-9]+\.[0-9]+ \([0-9a-f]{12}(-dirty)?\)\n$"#)
        #expect(result.stdout.wholeMatch(of: line) != nil, "\(result)")
        // The man page carries the same version (scripts/generate-manual.sh puts it on .Os).
        let version = result.stdout.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("contrib/man/buzz.1"), encoding: .utf8)
        #expect(page.contains("\n.Os BirthdayBuzz \(version)\n"), "the man page's version is not \(version)")
    }

    /// A data dir under a file says which path is in the way, in `doctor` (which
    /// creates nothing) and in the command that would create it.
    @Test func aDataDirThatCannotBeCreatedSaysWhere() async throws {
        let sandbox = try Sandbox()
        let blocker = try sandbox.write("blocker", "a file, not a folder\n")
        let dataDir = blocker + "/sub/data"
        let doctor = try await sandbox.run(["--data-dir", dataDir, "doctor"])
        #expect(doctor.status == 1, "\(doctor)")
        #expect(doctor.stdout.contains("FAIL  data dir \(dataDir) cannot be created (\(blocker) is not a folder)"), "\(doctor)")
        let list = try await sandbox.run(["--data-dir", dataDir, "list"])
        #expect(list.status == 1, "\(list)")
        #expect(list.stderr == "buzz: \(dataDir): cannot create the data dir (\(blocker) is not a folder)\n", "\(list)")
    }

    /// A missing relative data dir of one letter ("d", "x/y") is created, not a
    /// SIGILL inside Foundation's path code; ten commands racing to create one
    /// all succeed (the schema is created once, under a lock).
    @Test func shortRelativeDataDirsAndRacingFirstUse() async throws {
        let sandbox = try Sandbox()
        for dataDir in ["d", "x/y"] {
            let list = try await sandbox.run(["--data-dir", dataDir, "list"])
            #expect(list.status == 0, "\(dataDir): \(list)")
            #expect(FileManager.default.fileExists(atPath: sandbox.root + "/" + dataDir + "/buzz.sqlite"))
        }
        for round in 0..<3 {
            let dataDir = "race\(round)"
            let results = try await withThrowingTaskGroup(of: BuzzResult.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        try await sandbox.run(["--data-dir", dataDir, "--config", "/dev/null",
                                               index.isMultiple(of: 2) ? "tick" : "list", "--now", "2027-01-01"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for result in results { #expect(result.status == 0 && result.stderr.isEmpty, "\(result)") }
        }
    }

    /// `doctor` says a corrupt store is corrupt (quick_check), shows UTC as UTC
    /// and warns about a data dir other users can read.
    @Test func doctorFindsACorruptStoreAndAnOpenDataDir() async throws {
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[general]\ntimezone = \"UTC\"\n[reminders]\nchannels = [\"console\"]\n")
        chmod(sandbox.configPath, 0o600)
        let cards = (0..<400).map { VCard.card(uid: "u\($0)", name: "Person Number \($0)", bday: "1990-03-15") }.joined()
        #expect(try await sandbox.run(["import", try sandbox.write("c.vcf", cards)]).status == 0)
        let healthy = try await sandbox.run(["doctor"])
        #expect(healthy.status == 0, "\(healthy)")
        #expect(healthy.stdout.contains("time zone UTC,"), "\(healthy)")
        #expect(healthy.stdout.contains("passes quick_check"), "\(healthy)")

        chmod(sandbox.dataDir, 0o755)
        let open = try await sandbox.run(["doctor"])
        #expect(open.stdout.contains("warn  data dir \(sandbox.dataDir) is readable by other users (mode 755"), "\(open)")
        chmod(sandbox.dataDir, 0o700)

        // Garbage over the last pages (contact rows and indexes): either the
        // database no longer opens or quick_check finds it; before, `doctor`
        // said "all good" for damage the open did not touch.
        let database = sandbox.dataDir + "/buzz.sqlite"
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: database))
        let size = try handle.seekToEnd()
        #expect(size > 8 * 4096)
        try handle.seek(toOffset: size - 3 * 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        try handle.close()
        let corrupt = try await sandbox.run(["doctor"])
        #expect(corrupt.status == 1, "\(corrupt)")
        #expect(corrupt.stdout.contains("is corrupt:"), "\(corrupt)")
        #expect(!corrupt.stdout.contains("all good"), "\(corrupt)")
    }

    /// A `dispatch.lock` left by `sudo buzz tick` (root's, mode 600): `doctor`
    /// and `tick` name it and say how to fix it. Needs root to make the file
    /// and `setpriv` to run buzz as another user.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to leave a lock another user cannot open"))
    func doctorReportsADispatchLockItCannotOpen() async throws {
        let sandbox = try Sandbox()
        #expect(try await sandbox.run(["--config", "/dev/null", "tick"]).status == 0)
        let binary = try #require(BuzzBinary.path)
        // The way down to the data dir open to "nobody" (the data dir's parent is made private, 0700).
        for folder in [sandbox.root, (sandbox.dataDir as NSString).deletingLastPathComponent] { chmod(folder, 0o755) }
        let nobody = try #require(getpwnam("nobody")).pointee
        for path in [sandbox.dataDir, sandbox.dataDir + "/buzz.sqlite"] { chown(path, nobody.pw_uid, nobody.pw_gid) }
        for sidecar in ["-wal", "-shm"] { chown(sandbox.dataDir + "/buzz.sqlite" + sidecar, nobody.pw_uid, nobody.pw_gid) }
        let lock = sandbox.dataDir + "/dispatch.lock"
        chown(lock, 0, 0)
        chmod(lock, 0o600)
        for command in ["doctor", "tick"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(nobody.pw_uid)", "--regid=\(nobody.pw_gid)", "--clear-groups",
                                 binary, "--data-dir", sandbox.dataDir, "--config", "/dev/null", command]
            process.environment = ["HOME": sandbox.root, "PATH": "/usr/bin:/bin"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 1, "\(command): \(text)")
            #expect(text.contains("\(lock): cannot open the dispatch lock (Permission denied); it belongs to root"), "\(command): \(text)")
            #expect(text.contains("sudo rm \(lock)"), "\(command): \(text)")
        }
    }

    @Test func anEmptyDataDirIsAUsageError() async throws {
        let sandbox = try Sandbox()
        let result = try await sandbox.run(["--data-dir", "", "list"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--data-dir is empty"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.root + "/buzz.sqlite"))
    }

    @Test func dataDirIsCreatedPrivate() async throws {
        let sandbox = try Sandbox()
        let dataDir = sandbox.root + "/deep/nested/buzz-data"
        let file = try sandbox.write("p.vcf", VCard.card(uid: "p", name: "Pat Private", bday: "--0101"))
        let result = try await sandbox.run(["--data-dir", dataDir, "import", file])
        #expect(result.status == 0, "\(result)")
        func mode(_ path: String) throws -> Int? {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return (attributes[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(dataDir) == 0o700)
        #expect(try mode(dataDir + "/buzz.sqlite") == 0o600)
        for sidecar in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: dataDir + "/buzz.sqlite" + sidecar) {
            #expect(try mode(dataDir + "/buzz.sqlite" + sidecar) == 0o600, "\(sidecar)")
        }
    }

    @Test func dataDirFromEnvironmentDefaults() async throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("x.vcf", VCard.card(uid: "x", name: "Xena Xdg", bday: "--0101"))
        // No --data-dir: $XDG_DATA_HOME/birthdaybuzz.
        let result = try await sandbox.run(["import", file])
        #expect(result.status == 0, "\(result)")
        #expect(FileManager.default.fileExists(atPath: sandbox.root + "/xdg-data/birthdaybuzz/buzz.sqlite"))
    }

    @Test func environmentVariablesNameConfigAndDataDir() async throws {
        let sandbox = try Sandbox()
        let config = try sandbox.write("env/config.toml", "[reminders]\nfeb29 = \"mar1\"\n")
        let envData = sandbox.root + "/env-data"
        let file = try sandbox.write("e.vcf", VCard.card(uid: "e", name: "Eve Env", bday: "--0229"))
        let env: [String: String?] = ["BUZZ_CONFIG": config, "BUZZ_DATA_DIR": envData]
        let imported = try await sandbox.run(["import", file], environment: env)
        #expect(imported.status == 0, "\(imported)")
        #expect(FileManager.default.fileExists(atPath: envData + "/buzz.sqlite"))
        let list = try await sandbox.run(["list", "--json", "--now", "2027-02-01"], environment: env)
        #expect(list.stdout.contains(#""next":"2027-03-01""#), "BUZZ_CONFIG is read: \(list)")
        // The options win over the variables.
        let other = try await sandbox.run(["list", "--json", "--now", "2027-02-01", "--data-dir", sandbox.dataDir], environment: env)
        #expect(other.status == 0)
        #expect(other.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(other)")
    }

    @Test func withoutXDGConfigHomeTheConfigIsUnderHome() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("home/.config/birthdaybuzz/config.toml", "[reminders]\ntime = \"24:00\"\n")
        let result = try await sandbox.run(["list"], environment: ["XDG_CONFIG_HOME": nil])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains(path + ":2:"), "\(result)")
        #expect(result.stderr.contains("reminders.time"), "\(result)")
    }
}

/// `doctor` loads the templates as `tick` does, so a broken override is found before a reminder is due.
@Suite struct DoctorTemplateTests {
    /// Overrides in $XDG_CONFIG_HOME/birthdaybuzz/templates (docs/design/asks-and-wishes.md) apply with
    /// `--config` elsewhere too; `templates/` beside that config wins over them.
    @Test func templateOverridesBesideTheConfigThenUnderXDG() async throws {
        let sandbox = try Sandbox()
        let config = try sandbox.write("elsewhere/cfg.toml", "[general]\ntimezone = \"UTC\"\nlocale = \"en\"\n[reminders]\noffsets = [0]\n")
        chmod(config, 0o600)
        let cards = try sandbox.write("c.vcf", VCard.card(uid: "ada", name: "Ada Archer", bday: "1990-03-15"))
        #expect(try await sandbox.run(["--config", config, "import", cards, "--now", "2027-03-01"]).status == 0)
        try sandbox.write("config/birthdaybuzz/templates/en/reminder.mustache", "XDG says hi to {{name}}\n\nbody\n")
        let fromXDG = try await sandbox.run(["--config", config, "tick", "--now", "2027-03-15T09:00Z"])
        #expect(fromXDG.stdout.contains("XDG says hi to Ada Archer"), "\(fromXDG)")
        try sandbox.write("elsewhere/templates/en/reminder.mustache", "Beside says hi to {{name}}\n\nbody\n")
        let doctor = try await sandbox.run(["--config", config, "doctor"])
        #expect(doctor.stdout.contains(sandbox.root + "/elsewhere/templates and " + sandbox.configHome + "/birthdaybuzz/templates"),
                "\(doctor)")
        let fromBeside = try await sandbox.run(["--config", config, "tick", "--now", "2028-03-15T09:00Z"])
        #expect(fromBeside.stdout.contains("Beside says hi to Ada Archer"), "\(fromBeside)")
    }

    @Test func aBrokenTemplateOverrideIsNamedWithItsPosition() async throws {
        let sandbox = try Sandbox()
        let healthy = try await sandbox.run(["doctor"])
        #expect(healthy.status == 0, "\(healthy)")
        #expect(healthy.stdout.contains("ok    templates"), "\(healthy)")
        let path = try sandbox.write("config/birthdaybuzz/templates/en/reminder.mustache",
                                     "{{name}} turns {{age}\n\nHello\n")
        let broken = try await sandbox.run(["doctor"])
        #expect(broken.status == 1, "\(broken)")
        #expect(broken.stdout.contains("FAIL  \(path):1:16: tag is never closed with }}"), "\(broken)")
    }
}
