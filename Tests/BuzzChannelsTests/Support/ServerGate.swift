import BuzzTestKit
import Foundation

/// Whether the real test servers (docs/design/testing.md) can run here.
///
/// Tests that need a server carry `.enabled(if: ServerGate.allows(.smtp), …)`:
/// when the server's tools are missing they are skipped with a clear comment,
/// unless `BUZZ_REQUIRE_SERVERS=1` (set by `.ci/run`), which runs them anyway so
/// that a missing server is a failure, never a silent pass.
enum ServerGate {
    enum Server: Sendable {
        case dbus, smtp, http, exec
        /// dunst under Xvfb on a private bus (Debian's dunst and xvfb).
        case dunst
        /// Apprise, the oracle for Apprise URLs: Debian's `apprise` (CLI and library).
        case apprise
    }

    static var required: Bool {
        ProcessInfo.processInfo.environment["BUZZ_REQUIRE_SERVERS"] == "1"
    }

    /// The Python that has Debian's python3-dbusmock and python3-aiosmtpd.
    static let python = "/usr/bin/python3"

    static func allows(_ server: Server) -> Bool {
        required || toolsPresent(server)
    }

    static func toolsPresent(_ server: Server) -> Bool {
        switch server {
        case .dbus:
            return FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && PythonModules.available("dbusmock", python: python)
        case .smtp:
            return PythonModules.available("aiosmtpd", python: python) && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
        case .http:
            return FileManager.default.isExecutableFile(atPath: python)
        case .exec:
            return FileManager.default.isExecutableFile(atPath: "/bin/sh")
        case .dunst:
            return FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && DunstServer.present
        case .apprise:
            return FileManager.default.isExecutableFile(atPath: "/usr/bin/apprise") && PythonModules.available("apprise", python: python)
        }
    }

    /// Folder of the Python servers, copied into the test bundle's resources.
    static var serversDirectory: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Servers")
    }
}
