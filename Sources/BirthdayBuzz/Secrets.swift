import Foundation
import Synchronization

/// Remembers every secret value resolved at run time (passwords, tokens,
/// header values, URL credentials and query values) and removes them from any
/// text before it is printed, logged or stored (docs/design/channels.md).
///
/// Secrets belong to the channel that registered them: a channel's view
/// (`scoped(to:)`) registers under its name and scrubs only its own values,
/// so one channel's password can never mangle another channel's error text
/// ("could not connect to ***"). The unscoped scrubber hides every value.
public final class SecretScrubber: Sendable {
    private struct Secret: Sendable {
        var value: String
        /// The channel that registered it; nil for values every view hides.
        var owner: String?
    }

    private final class Store: Sendable {
        let secrets = Mutex<[Secret]>([])
    }

    private let store: Store
    /// The channel this view registers for and scrubs for; nil: every channel.
    public let owner: String?

    public init() {
        store = Store()
        owner = nil
    }

    private init(store: Store, owner: String?) {
        self.store = store
        self.owner = owner
    }

    /// The view a channel registers its secrets with and scrubs its errors with.
    public func scoped(to channel: String) -> SecretScrubber {
        SecretScrubber(store: store, owner: channel)
    }

    /// Registers a value to hide, whole: a password with spaces is hidden as
    /// one value, never word by word. Very short values (under 4 characters)
    /// are not registered: hiding every "1" in a reply would make it unreadable.
    /// An HTTP credential (`Bearer abc…`, `Basic dXNlcjpwYXNz`) also hides its
    /// token alone, and a Basic one the password inside it.
    public func register(_ secret: String) {
        let trimmed = secret.trimmingWhitespace()
        guard trimmed.count >= 4 else { return }
        var values = [trimmed]
        let words = trimmed.split(separator: " ", omittingEmptySubsequences: true)
        if words.count == 2, words[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }), words[1].count >= 8 {
            let token = String(words[1])
            values.append(token)
            if words[0].lowercased() == "basic", let data = Data(base64Encoded: token),
               let pair = String(data: data, encoding: .utf8), let colon = pair.firstIndex(of: ":") {
                values.append(pair)
                values.append(String(pair[pair.index(after: colon)...]))
            }
        }
        add(values)
    }

    /// Registers HTTP Basic credentials (from a URL's `user:password@`): the
    /// password, the pair, and the pair's base64 as `Authorization: Basic` sends it.
    public func registerBasicCredentials(user: String, password: String) {
        guard !password.isEmpty else { return }
        let pair = user + ":" + password
        add([password, pair, Data(pair.utf8).base64EncodedString()])
    }

    private func add(_ values: [String]) {
        store.secrets.withLock { list in
            for value in values where value.count >= 4
                && !list.contains(where: { $0.value == value && $0.owner == owner }) {
                list.append(Secret(value: value, owner: owner))
            }
            list.sort { $0.value.count > $1.value.count }  // longest first, so overlapping secrets go whole
        }
    }

    /// `text` with every secret of this view replaced by `***` (all of them
    /// for the unscoped scrubber; the channel's own for a channel's view).
    public func scrub(_ text: String) -> String {
        scrub(text, channel: owner)
    }

    /// `text` with the secrets of `channel` replaced by `***` (every secret when nil).
    public func scrub(_ text: String, channel: String?) -> String {
        store.secrets.withLock { list in
            var out = text
            for secret in list where channel == nil || secret.owner == nil || secret.owner == channel {
                if out.contains(secret.value) { out = out.replacing(secret.value, with: "***") }
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
