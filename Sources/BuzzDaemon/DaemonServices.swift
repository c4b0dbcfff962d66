#if canImport(Glibc)
import Glibc
#endif
import Logging
import ServiceLifecycle
import UnixSignals

/// A part of the daemon that runs on a thread of its own (the wall-clock
/// timer, the source watcher, the notification listener) as a `Service`: its
/// `run()` waits for the group's graceful shutdown (or cancellation), then
/// calls `stop`, which ends the thread. What starts the part is its owner's
/// business (the listener, for one, starts only when a notification needs it).
public struct ThreadService: Service, CustomStringConvertible {
    /// What logs call it.
    public let description: String
    private let stop: @Sendable () -> Void

    public init(_ name: String, stop: @escaping @Sendable () -> Void) {
        description = name
        self.stop = stop
    }

    public func run() async throws {
        try? await gracefulShutdown()  // returns on graceful shutdown, throws on cancellation: both end the part
        stop()
    }
}

/// `buzz run`'s services in one `ServiceGroup`: its parts (started in the
/// order given, shut down in the reverse), then the delivery loop, which is
/// shut down first and, when it returns, shuts the group down.
///
/// SIGTERM and SIGINT are the group's `gracefulShutdownSignals`; SIGHUP
/// calls `reload` (through `DaemonSignals`). The group's signals are Dispatch
/// signal sources: measured, they add libdispatch's manager thread, blocked in
/// epoll_wait, and no wake-up (docs/design/decisions.md, record 2).
public struct DaemonServices {
    public var parts: [any Service & CustomStringConvertible]
    public var loop: any Service & CustomStringConvertible
    public var logger: Logger

    public init(parts: [any Service & CustomStringConvertible], loop: any Service & CustomStringConvertible,
                logger: Logger) {
        self.parts = parts
        self.loop = loop
        self.logger = logger
    }

    /// Traps the signals, then runs the group until it has shut down. The
    /// signals are trapped before any service starts (the loop publishes the
    /// pid file that commands signal): SIGHUP here, SIGTERM and SIGINT by the
    /// group before it starts its first service.
    public func run(reload: @escaping @Sendable () -> Void) async throws {
        // Named explicitly: ServiceLifecycle logs `"\(service)"` at debug level,
        // and a default description could dump a config or an environment.
        var services = parts.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0, serviceName: $0.description) }
        services.append(.init(service: loop, successTerminationBehavior: .gracefullyShutdownGroup,
                              serviceName: loop.description))
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        DaemonSignals.unblock([SIGTERM, SIGINT, SIGHUP])
        try DaemonSignals.start(trapping: [SIGHUP]) { _ in reload() }
        try await group.run()
    }
}
