import Foundation
import Synchronization

/// Whether a test server's Python modules are installed (the suites that need
/// them are skipped, or fail with `BUZZ_REQUIRE_SERVERS=1`, when not).
public enum PythonModules {
    /// Whether `python` finds `module` (its spec, without running it: importing
    /// apprise costs 0.55 s of CPU, aiosmtpd 0.1-0.2 s); asked once per process, as
    /// every test that needs a server asks. A module that is there but cannot be
    /// imported fails the tests that use it, which is louder than a skip.
    public static func available(_ module: String, python: String = "/usr/bin/python3") -> Bool {
        let key = python + " " + module
        if let known = answers.withLock({ $0[key] }) { return known }
        let answer = probe(module, python: python)
        answers.withLock { $0[key] = answer }
        return answer
    }

    private static let answers = Mutex<[String: Bool]>([:])

    private static func probe(_ module: String, python: String) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)", module]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus == 0
        } catch {
            return false
        }
    }
}
