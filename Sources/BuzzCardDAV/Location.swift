import CurlSupport
import Foundation

/// An http(s) URL taken apart: scheme, lower-cased host, port, path and
/// query, the path and query percent-encoded in one canonical form (so two
/// spellings of one href compare equal).
///
/// Servers hand us hrefs in every form — absolute URLs, absolute paths,
/// relative paths (`book/`, `../other/`), with or without escapes — and a
/// configured `url` may have no path at all (`https://contacts.icloud.com`).
/// `resolving(_:)` follows RFC 3986 §5.2 to the letter (merge, then remove
/// dot segments), so no href, however odd, can crash us or walk out of the
/// place it claims to be in.
struct Location: Sendable, Equatable, Hashable {
    var scheme: String
    /// Lower-cased; an IPv6 address without its brackets.
    var host: String
    var port: Int?
    /// Starts with `/` (`https://host` has the path `/`).
    var path: String
    var query: String?
    var hasUserInfo = false

    /// An absolute http:// or https:// URL; nil for anything else.
    init?(_ text: String) {
        guard let reference = URIReference(Location.canonical(text.trimmingCharacters(in: .whitespacesAndNewlines))),
              let scheme = reference.scheme, let authority = reference.authority,
              let location = Location(scheme: scheme, authority: authority, path: Location.removingDotSegments(reference.path),
                                      query: reference.query) else { return nil }
        self = location
    }

    private init(scheme: String, host: String, port: Int?, path: String, query: String?, hasUserInfo: Bool = false) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.query = query
        self.hasUserInfo = hasUserInfo
    }

    /// From a parsed scheme and authority (`user@host:port`); nil unless http(s) with a usable host.
    private init?(scheme: String, authority: Substring, path: String, query: Substring?) {
        let scheme = scheme.lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = authority
        var userInfo = false
        if let at = rest.lastIndex(of: "@") {
            userInfo = true
            rest = rest[rest.index(after: at)...]
        }
        var host: Substring
        var portText: Substring?
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return nil }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            // reg-name or IPv4 (unreserved and sub-delims; no escapes): nothing that could split the URL.
            guard !host.isEmpty, host.unicodeScalars.allSatisfy({ Location.hostCharacters.contains($0) }) else { return nil }
        }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy(\.isASCII), let number = Int(portText), number <= 65535 else { return nil }
            port = number
        }
        // An empty path is "/" for http(s) (RFC 3986 §6.2.3): one spelling, so a URL parses back to itself.
        self.init(scheme: scheme, host: host.lowercased(), port: port, path: path.isEmpty ? "/" : path, query: query.map(String.init),
                  hasUserInfo: userInfo)
    }

    private static let hostCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=")

    var origin: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return scheme + "://" + hostPart + (port.map { ":\($0)" } ?? "")
    }

    /// Scheme, host and port (the default port made explicit): where curl would still send credentials.
    var originKey: String {
        origin + (port == nil ? (scheme == "https" ? ":443" : ":80") : "")
    }

    var string: String { origin + (path.isEmpty ? "/" : path) + (query.map { "?" + $0 } ?? "") }

    /// Origin and path, for messages (no query: it may hold a secret).
    var display: String { origin + (path.isEmpty ? "/" : path) }

    /// The literal `localhost`, an address in 127.0.0.0/8, or `::1`: an address,
    /// never a name that merely starts with `127.` (`127.attacker.example`).
    var isLoopback: Bool { isLoopbackHost(host) }

    func with(path: String) -> Location {
        Location(scheme: scheme, host: host, port: port, path: path, query: nil)
    }

    /// The path with a trailing slash: what a member's path starts with.
    var collectionPath: String { path.hasSuffix("/") ? path : path + "/" }

    /// Whether `other` is a member inside this collection: same origin, a path
    /// below this one (not this one itself).
    func contains(_ other: Location) -> Bool {
        other.originKey == originKey && other.path.hasPrefix(collectionPath) && other.path.count > collectionPath.count
    }

    /// Whether `other` names this collection itself (with or without its trailing slash).
    func isSameCollection(_ other: Location) -> Bool {
        other.originKey == originKey && (other.path == path || other.path == collectionPath
            || other.collectionPath == collectionPath)
    }

    /// An href (absolute URL, network-path, absolute or relative path, with
    /// or without a query) resolved against this location as RFC 3986 §5.2.2
    /// says; nil when the result is not an http(s) URL with a host. The
    /// fragment is dropped.
    func resolving(_ href: String) -> Location? {
        guard let reference = URIReference(Location.canonical(href.trimmingCharacters(in: .whitespacesAndNewlines))) else {
            return nil
        }
        if let scheme = reference.scheme {
            guard let authority = reference.authority else { return nil }
            return Location(scheme: scheme, authority: authority, path: Location.removingDotSegments(reference.path),
                            query: reference.query)
        }
        if let authority = reference.authority {
            return Location(scheme: scheme, authority: authority, path: Location.removingDotSegments(reference.path),
                            query: reference.query)
        }
        var target = self
        if reference.path.isEmpty {
            if let query = reference.query { target.query = String(query) }
            return target
        }
        if reference.path.hasPrefix("/") {
            target.path = Location.removingDotSegments(reference.path)
        } else {
            // Merge (§5.2.3): an authority with an empty path counts as "/".
            let directory = path.isEmpty ? "/" : String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
            target.path = Location.removingDotSegments((directory.hasPrefix("/") ? directory : "/" + directory) + reference.path)
        }
        target.query = reference.query.map(String.init)
        return target
    }

    /// RFC 3986 §5.2.4: `.` and `..` segments removed (never above the root).
    static func removingDotSegments<S: StringProtocol>(_ path: S) -> String {
        var input = Array(path.utf8)[...]
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        func starts(_ prefix: [UInt8]) -> Bool { input.starts(with: prefix) }
        func dropLastSegment() {
            if let last = output.lastIndex(of: slash) { output.removeSubrange(last...) } else { output.removeAll() }
        }
        while !input.isEmpty {
            if starts([dot, dot, slash]) {
                input = input.dropFirst(3)
            } else if starts([dot, slash]) {
                input = input.dropFirst(2)
            } else if starts([slash, dot, slash]) {
                input = input.dropFirst(2)
            } else if input.elementsEqual([slash, dot]) {
                input = [slash][...]
            } else if starts([slash, dot, dot, slash]) {
                input = input.dropFirst(3)
                dropLastSegment()
            } else if input.elementsEqual([slash, dot, dot]) {
                input = [slash][...]
                dropLastSegment()
            } else if input.elementsEqual([dot]) || input.elementsEqual([dot, dot]) {
                input = []
            } else {
                var end = input.startIndex
                if input[end] == slash { end += 1 }
                while end < input.endIndex, input[end] != slash { end += 1 }
                output.append(contentsOf: input[input.startIndex..<end])
                input = input[end...]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// One spelling for every href: what may not stand in a URL (spaces,
    /// non-ASCII, quotes, a `%` without two hex digits) percent-encoded,
    /// escapes of unreserved characters decoded (`%2E` is `.`, RFC 3986
    /// §6.2.2.2) and the hex digits of the others upper-cased. Servers write
    /// hrefs both ways, and `%2e%2e` must not hide a `..` from the checks.
    static func canonical(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        func escape(_ byte: UInt8) {
            let digits = Array("0123456789ABCDEF".utf8)
            out.append(UInt8(ascii: "%"))
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                if index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) {
                    let value = high << 4 | low
                    if isUnreserved(value) { out.append(value) } else { escape(value) }
                    index += 3
                    continue
                }
                escape(byte)
            } else if isUnreserved(byte) || isReservedOrAllowed(byte) {
                out.append(byte)
            } else {
                escape(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// gen-delims and sub-delims (RFC 3986 §2.2), kept as they are.
    private static func isReservedOrAllowed(_ byte: UInt8) -> Bool {
        ":/?#[]@!$&'()*+,;=".utf8.contains(byte)
    }
}

/// A URI reference split as RFC 3986 Appendix B does:
/// `^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?`, with a
/// scheme only where its syntax allows one (ALPHA *( ALPHA / DIGIT / + - . )).
private struct URIReference {
    var scheme: String?
    var authority: Substring?
    var path: Substring
    var query: Substring?

    init?(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        if let colon = rest.firstIndex(where: { $0 == ":" || $0 == "/" || $0 == "?" }), rest[colon] == ":" {
            let candidate = rest[..<colon]
            guard let first = candidate.first, first.isASCII, first.isLetter,
                  candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }) else {
                // "a b:c" is not a scheme; a relative path's first segment may not hold a colon (RFC 3986 §4.2).
                return nil
            }
            scheme = String(candidate)
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            authority = rest[..<end]
            rest = rest[end...]
        }
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        path = rest
    }
}
