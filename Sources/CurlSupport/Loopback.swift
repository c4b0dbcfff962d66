import Foundation

/// Whether `host` is this machine by address: the literal `localhost`, an
/// IPv4 address in 127.0.0.0/8, or `::1` (with or without brackets). A name
/// that merely starts with `127.` (`127.attacker.example`) is a remote host:
/// plain text (an SMTP session without TLS, a CardDAV password over http) is
/// allowed only to a loopback host, so this must be an address check, not a
/// string prefix.
public func isLoopbackHost(_ host: String) -> Bool {
    var host = host.lowercased()
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    if host == "localhost" || host == "localhost." { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
        return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, host, &v6) == 1 {
        return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }
    return false
}
