import Foundation
import Synchronization

/// Whether a test server's Python modules are installed (the suites that need
/// them are skipped, or fail with `BUZZ_REQUIRE_SERVERS=1`, when not).
public enum PythonModules {
    /// Whether `python -c "import <module>"` succeeds; asked once per process
    /// (every test that needs a server asks, and a start of python that imports
    /// aiosmtpd costs 0.1-0.2 s of CPU).
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
        process.arguments = ["-c", "import \(module)"]
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
