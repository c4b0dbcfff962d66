import Foundation

/// A server that is there and never answers: a socket on 127.0.0.1 that
/// listens but is never read, so the kernel completes each connection, takes
/// the request into its buffer, and nothing ever comes back (a CardDAV server
/// that hangs, as a stalled reverse proxy does). Closed when released.
final class SilentServer {
    let port: Int
    private let descriptor: Int32

    init() throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        guard let port = SilentServer.bind(descriptor), listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw CocoaError(.fileWriteUnknown)
        }
        self.port = port
    }

    deinit { close(descriptor) }

    var url: String { "http://127.0.0.1:\(port)/" }

    /// A loopback port nothing listens on (bound, then closed): a connection there is refused at once.
    static func refusedURL() throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(descriptor) }
        guard let port = bind(descriptor) else { throw CocoaError(.fileWriteUnknown) }
        return "http://127.0.0.1:\(port)/"
    }

    /// Binds to 127.0.0.1 on a free port; returns the port.
    private static func bind(_ descriptor: Int32) -> Int? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                Glibc.bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }
}
