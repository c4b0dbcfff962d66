import Foundation
import Synchronization

/// Remembers every secret value resolved at run time (passwords, tokens,
/// header values read from the environment, URL query values) and removes them
/// from any text before it is printed, logged or stored (DESIGN §5).
public final class SecretScrubber: Sendable {
    private let secrets = Mutex<[String]>([])

    public init() {}

    /// Registers a value to hide. Very short values (under 4 characters) are
    /// not registered: hiding every "1" in a reply would make it unreadable.
    public func register(_ secret: String) {
        let trimmed = secret.trimmingWhitespace()
        guard trimmed.count >= 4 else { return }
        // "Bearer abc…" / "Basic …": the token alone must go too, wherever it shows.
        let parts = trimmed.split(separator: " ").map(String.init).filter { $0.count >= 8 }
        secrets.withLock { list in
            for value in [trimmed] + parts where !list.contains(value) {
                list.append(value)
            }
            list.sort { $0.count > $1.count }  // longest first, so overlapping secrets go whole
        }
    }

    /// `text` with every registered secret replaced by `***`.
    public func scrub(_ text: String) -> String {
        secrets.withLock { list in
            var out = text
            for secret in list where out.contains(secret) {
                out = out.replacing(secret, with: "***")
            }
            return out
        }
    }

    /// A URL as it may be shown: scheme and host (and port) only. Slack, Discord,
    /// ntfy and Gotify keep their secret in the path or query.
    public static func displayURL(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return "(url)" }
        let scheme = url[..<schemeEnd.lowerBound]
        var rest = url[schemeEnd.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }  // user:password@
        return scheme + "://" + rest
    }
}
