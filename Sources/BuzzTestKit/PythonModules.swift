import Foundation

/// Whether a test server's Python modules are installed (the suites that need
/// them are skipped, or fail with `BUZZ_REQUIRE_SERVERS=1`, when not).
public enum PythonModules {
    /// Whether `python -c "import <module>"` succeeds.
    public static func available(_ module: String, python: String = "/usr/bin/python3") -> Bool {
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
