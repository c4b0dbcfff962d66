import BuzzSystem
import CCurl
import Dispatch
import Foundation
import Synchronization

/// A libcurl failure: curl's own message, and what kind of failure it is.
public struct CurlError: Error, Sendable, CustomStringConvertible {
    public let code: Int
    /// curl's error buffer, else `curl_easy_strerror`.
    public let message: String

    init(_ code: CURLcode, buffer: String?) {
        self.code = Int(code.rawValue)
        let detail = buffer.flatMap { $0.isEmpty ? nil : $0 }
            ?? (try? CurlLibrary.get()).map { String(cString: CCurl_easy_strerror($0.api, code)) }
            ?? "libcurl error \(code.rawValue)"
        message = detail.replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
    }

    init(setup message: String) {
        code = -1
        self.message = message
    }

    /// The connection could not be made or was lost: trying later can help.
    public var isConnectionFailure: Bool {
        [CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_SEND_ERROR,
         CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SSL_CONNECT_ERROR]
            .map { Int($0.rawValue) }.contains(code)
    }

    public var isTimeout: Bool { code == Int(CURLE_OPERATION_TIMEDOUT.rawValue) }

    /// This error, or what it really was when the process ran out of file descriptors.
    func explained() -> CurlError {
        guard isConnectionFailure || code == -1, let exhausted = SystemError.descriptorsExhausted() else { return self }
        return CurlError(code: isConnectionFailure ? code : Int(CURLE_COULDNT_CONNECT.rawValue), message: exhausted)
    }

    private init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// TLS certificate or host verification failed.
    public var isCertificateProblem: Bool {
        [CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM]
            .map { Int($0.rawValue) }.contains(code)
    }

    public var isLoginDenied: Bool { code == Int(CURLE_LOGIN_DENIED.rawValue) }
    /// STARTTLS was required and the server did not offer it.
    public var isTLSRequiredButUnavailable: Bool { code == Int(CURLE_USE_SSL_FAILED.rawValue) }

    public var description: String { message }
}

/// Transfer options common to HTTP and SMTP.
public struct TransferSecurity: Sendable {
    /// Skip TLS certificate and host verification (`insecure = true`).
    public var insecure = false
    /// A PEM file of CA certificates to trust instead of the system's.
    public var caFile: String?

    public init(insecure: Bool = false, caFile: String? = nil) {
        self.insecure = insecure
        self.caFile = caFile
    }
}

/// The one owner of a libcurl easy handle and of everything it points to
/// (error buffer, header lists, request body, callback context).
///
/// Not thread-safe by itself: `CurlSession` serializes every use on its own
/// queue. Reusing one handle keeps the connection alive between transfers.
final class CurlEasy {
    let handle: OpaquePointer
    /// The multi handle every transfer runs in (alone): it holds the connection
    /// cache, so the connection stays alive between transfers.
    private let multi: OpaquePointer
    /// libcurl's entry points (CurlLibrary.swift).
    private let api: UnsafeMutablePointer<CCurl_api>
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    /// The upload or POST body, in memory we own: libcurl reads it without copying.
    private var body = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var bodyOffset = 0
    var responseBody: [UInt8] = []
    var responseHeaders: [(String, String)] = []
    /// Caps what is read of a reply: the transfer is cut there (an endless
    /// reply is not read until the timeout).
    var responseLimit = 1 << 20
    /// The reply had more than `responseLimit` bytes, and the transfer was cut.
    var responseTruncated = false
    /// The protocol set configured on this handle (options set once).
    var configuredProtocols: String?
    /// With `recordServerReplies`: the server's last failing (4xx/5xx) reply line
    /// of the transfer (SMTP: "554 5.7.1 message rejected as spam"), which
    /// libcurl's own error text ("Weird server reply") leaves out. Later replies
    /// (to RSET or QUIT) do not replace it.
    var lastServerReply: String?

    init() throws {
        api = try CurlLibrary.get().api
        guard let easy = CCurl_easy_init(api) else {
            throw CurlError(setup: "libcurl could not be initialised").explained()
        }
        guard let multi = CCurl_multi_init(api) else {
            CCurl_easy_cleanup(api, easy)
            throw CurlError(setup: "libcurl could not be initialised").explained()
        }
        handle = OpaquePointer(easy)
        self.multi = OpaquePointer(multi)
        errorBuffer[0] = 0
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeRawPointer(errorBuffer))
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_FOLLOWLOCATION, 0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        try set(CURLOPT_WRITEDATA, pointer: context)
        try set(CURLOPT_HEADERDATA, pointer: context)
        try set(CURLOPT_READDATA, pointer: context)
        try check(CCurl_setopt_callback(api, raw, CURLOPT_WRITEFUNCTION, curlWrite))
        try check(CCurl_setopt_callback(api, raw, CURLOPT_HEADERFUNCTION, curlHeader))
        try check(CCurl_setopt_callback(api, raw, CURLOPT_READFUNCTION, curlRead))
    }

    deinit {
        // The multi handle first: it closes the cached connections (SMTP says QUIT).
        _ = CCurl_multi_cleanup(api, UnsafeMutableRawPointer(multi))
        CCurl_easy_cleanup(api, raw)
        for list in lists { CCurl_slist_free_all(api, list) }
        errorBuffer.deallocate()
        body.deallocate()
    }

    private var raw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(handle) }

    func check(_ code: CURLcode) throws {
        guard code == CURLE_OK else { throw CurlError(code, buffer: nil) }
    }

    func set(_ option: CURLoption, _ value: Int) throws {
        try check(CCurl_setopt_long(api, raw, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeRawPointer?) throws {
        try check(CCurl_setopt_ptr(api, raw, option, pointer))
    }

    /// Sets a string option (libcurl copies strings).
    func set(_ option: CURLoption, _ value: String?) throws {
        guard let value else {
            try check(CCurl_setopt_ptr(api, raw, option, nil))
            return
        }
        try value.withCString { try check(CCurl_setopt_ptr(api, raw, option, $0)) }
    }

    /// Sets a list option (headers, recipients); the list lives as long as the handle
    /// or until replaced by the next call for the same transfer.
    func set(_ option: CURLoption, list values: [String]) throws {
        var list: UnsafeMutablePointer<curl_slist>?
        for value in values {
            guard let appended = value.withCString({ CCurl_slist_append(api, list, $0) }) else {
                if let list { CCurl_slist_free_all(api, list) }
                throw CurlError(setup: "out of memory building a libcurl list")
            }
            list = appended
        }
        try check(CCurl_setopt_ptr(api, raw, option, list.map { UnsafeRawPointer($0) }))
        if let list { lists.append(list) }
    }

    /// Frees the lists of the previous transfer (after their options were replaced).
    func dropOldLists(keepingLast count: Int) {
        guard lists.count > count else { return }
        for list in lists.prefix(lists.count - count) { CCurl_slist_free_all(api, list) }
        lists.removeFirst(lists.count - count)
    }

    func setSecurity(_ security: TransferSecurity) throws {
        try set(CURLOPT_SSL_VERIFYPEER, security.insecure ? 0 : 1)
        try set(CURLOPT_SSL_VERIFYHOST, security.insecure ? 0 : 2)
        if let ca = security.caFile { try set(CURLOPT_CAINFO, ca) }
    }

    /// Sets the request body (POSTFIELDS for HTTP, read callback for uploads).
    func setBody(_ bytes: [UInt8], asPostFields: Bool) throws {
        let fresh = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        fresh.copyBytes(from: bytes)
        if asPostFields {
            try check(CCurl_setopt_off(api, raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)))
            try set(CURLOPT_POSTFIELDS, pointer: UnsafeRawPointer(fresh.baseAddress))
        }
        body.deallocate()
        body = UnsafeMutableRawBufferPointer(rebasing: fresh[..<bytes.count])
        bodyOffset = 0
        if !asPostFields {
            try check(CCurl_setopt_off(api, raw, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.count)))
        }
    }

    /// How long a transfer polls its socket without sleeping before it sleeps
    /// in `poll` (CLOCK_MONOTONIC nanoseconds).
    ///
    /// A loopback or LAN server answers in tens of microseconds, less than it
    /// takes to put the thread to sleep and wake it again: on the virtual
    /// machine this was measured on, a sleeping wait made a loopback POST take
    /// ~100 µs and a delivery (POST + ledger commit) ~150 µs, where polling
    /// took 57 µs and 80 µs. A slow or remote server costs at most this much
    /// CPU per transfer, then the wait sleeps as `curl_easy_perform` would.
    /// Nothing spins between transfers: an idle `run` still never wakes.
    static let spinBudget: UInt64 = 500_000

    /// Runs the transfer (blocking): libcurl's multi interface driven here, so
    /// that the wait for the reply first polls for up to `spinBudget`, then sleeps.
    func perform() throws {
        lastServerReply = nil
        responseBody.removeAll(keepingCapacity: true)
        responseHeaders.removeAll(keepingCapacity: true)
        responseTruncated = false
        bodyOffset = 0
        errorBuffer[0] = 0
        let multi = UnsafeMutableRawPointer(self.multi)
        try checkMulti(CCurl_multi_add_handle(api, multi, raw))
        defer { _ = CCurl_multi_remove_handle(api, multi, raw) }
        let spinUntil = CurlEasy.monotonicNanoseconds() &+ CurlEasy.spinBudget
        var running: Int32 = 1
        var spinning = true
        while true {
            try checkMulti(CCurl_multi_perform(api, multi, &running))
            if running == 0 { break }
            if spinning, CurlEasy.monotonicNanoseconds() >= spinUntil { spinning = false }
            // libcurl shortens the sleep to its own timers (CURLOPT_TIMEOUT included).
            if !spinning { try checkMulti(CCurl_multi_poll(api, multi, 1000)) }
        }
        var found: Int32 = 0
        let code = CCurl_multi_result(api, multi, raw, &found)
        guard found != 0 else { throw CurlError(setup: "libcurl finished without a result") }
        guard code == CURLE_OK else {
            throw CurlError(code, buffer: String(cString: errorBuffer)).explained()
        }
    }

    private func checkMulti(_ code: CURLMcode) throws {
        guard code != CURLM_OK else { return }
        throw CurlError(setup: "libcurl: " + String(cString: CCurl_multi_strerror(api, code)))
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Keeps the server's reply lines (libcurl's debug callback, which needs
    /// CURLOPT_VERBOSE; nothing is printed). For SMTP, where they explain failures.
    func recordServerReplies() throws {
        try set(CURLOPT_DEBUGDATA, pointer: Unmanaged.passUnretained(self).toOpaque())
        try check(CCurl_setopt_debug(api, raw, curlDebug))
        try set(CURLOPT_VERBOSE, 1)
    }

    fileprivate func receivedReply(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first, first == UInt8(ascii: "4") || first == UInt8(ascii: "5") else { return }
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        lastServerReply = String(line.prefix(200))
    }

    func info(_ info: CURLINFO) -> Int {
        var value = 0
        _ = CCurl_getinfo_long(api, raw, info, &value)
        return value
    }

    /// Keeps `bytes`; false (libcurl then stops the transfer) once the reply passes `responseLimit`.
    fileprivate func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let room = responseLimit - responseBody.count
        if bytes.count > room {
            if room > 0 { responseBody.append(contentsOf: bytes.prefix(room)) }
            responseTruncated = true
            return false
        }
        responseBody.append(contentsOf: bytes)
        return true
    }

    fileprivate func receivedHeader(_ bytes: UnsafeRawBufferPointer) {
        if bytes.starts(with: "HTTP/".utf8) { responseHeaders.removeAll(keepingCapacity: true) }  // a new response (after 100-continue)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        responseHeaders.append((CurlEasy.trimmed(bytes[..<colon], newlines: false),
                                CurlEasy.trimmed(bytes[(colon + 1)...], newlines: true)))
    }

    /// The bytes as text without surrounding white space (and line ends, with `newlines`):
    /// ASCII trimmed here, anything else left to Foundation.
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>, newlines: Bool) -> String {
        func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || (newlines && (0x0A...0x0D).contains(byte))
        }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        if start < end, bytes[start] < 0x80, bytes[end - 1] < 0x80 { return text }
        return text.trimmingCharacters(in: newlines ? .whitespacesAndNewlines : .whitespaces)
    }

    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, body.count - bodyOffset)
        guard count > 0 else { return 0 }
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: body[bodyOffset..<bodyOffset + count]))
        bodyOffset += count
        return count
    }
}

private func curlWrite(_ data: UnsafeMutablePointer<CChar>, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
    // Fewer bytes than handed (0) makes libcurl end the transfer with CURLE_WRITE_ERROR.
    return easy.received(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

private func curlHeader(_ data: UnsafeMutablePointer<CChar>, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
    easy.receivedHeader(UnsafeRawBufferPointer(start: data, count: size * count))
    return size * count
}

private func curlDebug(_ handle: UnsafeMutableRawPointer, _ type: curl_infotype, _ data: UnsafeMutablePointer<CChar>, _ size: Int,
                       _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard type == CURLINFO_HEADER_IN, let context else { return 0 }
    Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue().receivedReply(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

private func curlRead(_ data: UnsafeMutablePointer<CChar>, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return Int(CURL_READFUNC_ABORT) }
    let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
    return easy.read(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}

/// Runs libcurl work for one channel on a queue of its own, off Swift's
/// cooperative pool, with one easy handle reused across transfers (keep-alive).
///
/// A handle holds about three file descriptors while it is open (its kept-alive
/// connection and its multi handle's wake-up pair), so only the
/// `maxOpenHandles` most recently used sessions keep theirs: a pass over 400
/// webhook channels must not run out of descriptors (`ulimit -n` is often 1024).
///
/// `@unchecked Sendable`: the handle is only touched from `queue`.
public final class CurlSession: @unchecked Sendable {
    private let queue: DispatchQueue
    private var easy: CurlEasy?

    /// How many sessions keep their handle (and connection) between transfers;
    /// the least recently used idle one closes when another opens. 16 for a
    /// command; the test suite raises it, as its tests run side by side in one
    /// process, each with its own clients, and one test's batch must keep its
    /// connection however many other tests send meanwhile.
    /// Kept with the open handles' list, read under its lock with it.
    public static var maxOpenHandles: Int {
        get { openHandles.limit }
        set { openHandles.limit = newValue }
    }

    static let openHandles = OpenHandles(limit: 16)

    public init(label: String) {
        queue = DispatchQueue(label: "birthdaybuzz.curl." + label)
    }

    /// Runs `body` with the session's handle on the session's queue — or right
    /// here, serialized by the queue, when the caller runs on a `BlockingExecutor`.
    func run<T: Sendable>(_ body: @escaping @Sendable (CurlEasy) throws -> T) async throws -> T {
        // Room first: close the least recently used idle handles beyond the cap.
        for session in CurlSession.openHandles.use(self) {
            session.queue.sync { session.easy = nil }
        }
        defer { CurlSession.openHandles.done(self) }
        if BlockingExecutor.isActive {
            return try queue.sync {
                if easy == nil { easy = try CurlEasy() }
                guard let easy else { throw CurlError(setup: "no libcurl handle") }
                return try body(easy)
            }
        }
        return try await runOnQueue(body)
    }

    /// `run` off a `BlockingExecutor`: on the queue, the caller suspended meanwhile.
    ///
    /// A function of its own (as `closeOnQueue`): where the continuation is in the
    /// function, entering it builds `CheckedContinuation<…, any Error>`'s metadata,
    /// whose `Error` requirement the runtime checks by a scan of every conformance
    /// in the binary, ~0.2 ms of a cold `send` that never suspends here (perf).
    @inline(never)
    private func runOnQueue<T: Sendable>(_ body: @escaping @Sendable (CurlEasy) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    if self.easy == nil { self.easy = try CurlEasy() }
                    guard let easy = self.easy else { throw CurlError(setup: "no libcurl handle") }
                    continuation.resume(returning: try body(easy))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Closes the connection (the handle is made anew on the next use).
    public func close() async {
        CurlSession.openHandles.remove(self)
        if BlockingExecutor.isActive {
            // As `run` does here: no hop to the queue (whose first use would start a thread).
            queue.sync { easy = nil }
            return
        }
        await closeOnQueue()
    }

    /// `close` off a `BlockingExecutor` (a function of its own: see `runOnQueue`).
    @inline(never)
    private func closeOnQueue() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.easy = nil
                continuation.resume()
            }
        }
    }
}

/// The sessions that may hold a libcurl handle, least recently used first,
/// each marked while a transfer runs on it (a busy one is never closed).
final class OpenHandles: Sendable {
    private final class Entry: @unchecked Sendable {
        weak var session: CurlSession?
        var busy = 0
        init(_ session: CurlSession) { self.session = session }
    }

    /// Entries (and the limit) are only read and changed under the lock.
    private let state: Mutex<(entries: [Entry], limit: Int)>

    init(limit: Int) {
        state = Mutex(([], limit))
    }

    /// How many sessions keep their handle open.
    var limit: Int {
        get { state.withLock { $0.limit } }
        set { state.withLock { $0.limit = newValue } }
    }

    /// Marks `session` busy and most recent; returns the idle sessions to close
    /// (oldest first) so that at most `limit` stay open.
    func use(_ session: CurlSession) -> [CurlSession] {
        state.withLock { state in
            state.entries.removeAll { $0.session == nil }
            let entry: Entry
            if let index = state.entries.firstIndex(where: { $0.session === session }) {
                entry = state.entries.remove(at: index)
            } else {
                entry = Entry(session)
            }
            entry.busy += 1
            state.entries.append(entry)
            var victims: [CurlSession] = []
            var index = 0
            while state.entries.count > state.limit, index < state.entries.count - 1 {
                if state.entries[index].busy == 0, let victim = state.entries[index].session {
                    victims.append(victim)
                    state.entries.remove(at: index)
                } else {
                    index += 1
                }
            }
            return victims
        }
    }

    func done(_ session: CurlSession) {
        state.withLock { state in
            if let entry = state.entries.first(where: { $0.session === session }) { entry.busy = max(0, entry.busy - 1) }
        }
    }

    func remove(_ session: CurlSession) {
        state.withLock { state in state.entries.removeAll { $0.session == nil || $0.session === session } }
    }
}
