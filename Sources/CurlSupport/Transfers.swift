import CCurl
import Foundation

/// One HTTP request for `CurlSession.http(_:)`.
public struct HTTPRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Whole-transfer timeout, seconds.
    public var timeout: Double
    public var security: TransferSecurity
    /// How much of the reply body is read: past it the transfer is cut (the
    /// connection closed) and `HTTPResponse.isTruncated` tells. 1 MiB suits
    /// webhooks; a CardDAV multiget of cards with photos needs more.
    public var responseLimit: Int

    public init(url: String, method: String = "POST", headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                timeout: Double = 10, security: TransferSecurity = TransferSecurity(), responseLimit: Int = 1 << 20) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.security = security
        self.responseLimit = responseLimit
    }
}

/// What an HTTP server answered.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    /// The reply body, up to the request's `responseLimit` (1 MiB by default).
    public var body: [UInt8]
    /// The server sent more than `responseLimit` bytes; `body` holds the first
    /// ones, and the rest was not read (the transfer was cut).
    public var isTruncated = false

    /// The first header of that name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// One mail for `CurlSession.sendMail(_:)`: one SMTP transaction.
public struct MailTransfer: Sendable {
    /// `smtp://host:port` or `smtps://host:port`.
    public var url: String
    /// Require STARTTLS on `smtp://` (fail when the server does not offer it).
    public var requireTLS: Bool
    public var username: String?
    public var password: String?
    /// Envelope sender (a bare address).
    public var from: String
    /// Envelope recipients (bare addresses).
    public var recipients: [String]
    /// The RFC 5322 message, CRLF line ends; libcurl dot-stuffs it.
    public var message: [UInt8]
    public var timeout: Double
    public var security: TransferSecurity

    public init(url: String, requireTLS: Bool, username: String?, password: String?, from: String,
                recipients: [String], message: [UInt8], timeout: Double, security: TransferSecurity) {
        self.url = url
        self.requireTLS = requireTLS
        self.username = username
        self.password = password
        self.from = from
        self.recipients = recipients
        self.message = message
        self.timeout = timeout
        self.security = security
    }
}

extension CurlSession {
    /// Sends an HTTP request over the session's kept-alive connection. Redirects
    /// are not followed; only http and https are allowed.
    public func http(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await run { easy in
            try easy.configureOnce(protocols: "http,https")
            try easy.set(CURLOPT_URL, request.url)
            try easy.set(CURLOPT_TIMEOUT_MS, Int(request.timeout * 1_000))
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(min(request.timeout, 10) * 1_000))
            try easy.setSecurity(request.security)
            easy.responseLimit = request.responseLimit
            // An empty Expect: avoids libcurl's 100-continue wait on larger bodies.
            var lines = request.headers.map { $0.name + ": " + $0.value }
            lines.append("Expect:")
            try easy.set(CURLOPT_HTTPHEADER, list: lines)
            easy.dropOldLists(keepingLast: 1)
            if request.method == "GET" {
                try easy.set(CURLOPT_CUSTOMREQUEST, nil)
                try easy.set(CURLOPT_HTTPGET, 1)  // a plain GET, no body (POSTFIELDS makes the next one a POST again)
            } else {
                try easy.setBody(request.body, asPostFields: true)
                try easy.set(CURLOPT_CUSTOMREQUEST, request.method == "POST" ? nil : request.method)
            }
            do {
                try easy.perform()
            } catch where easy.responseTruncated {
                // Cut at the limit on purpose: the status and the first bytes stand.
            }
            var response = HTTPResponse(status: easy.info(CURLINFO_RESPONSE_CODE),
                                        headers: easy.responseHeaders.map { (name: $0.0, value: $0.1) },
                                        body: easy.responseBody)
            response.isTruncated = easy.responseTruncated
            if easy.responseBody.capacity > 4 << 20 { easy.responseBody = [] }  // a large reply's buffer is not kept
            return response
        }
    }

    /// Sends one mail; returns the server's last SMTP reply code. A batch through
    /// one session reuses the connection.
    @discardableResult
    public func sendMail(_ transfer: MailTransfer) async throws -> Int {
        try await run { easy in
            try easy.configureOnce(protocols: "smtp,smtps")
            try easy.recordServerReplies()
            try easy.set(CURLOPT_URL, transfer.url)
            try easy.set(CURLOPT_USE_SSL, Int((transfer.requireTLS ? CURLUSESSL_ALL : CURLUSESSL_NONE).rawValue))
            try easy.set(CURLOPT_TIMEOUT_MS, Int(transfer.timeout * 1_000))
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(min(transfer.timeout, 10) * 1_000))
            try easy.setSecurity(transfer.security)
            try easy.set(CURLOPT_USERNAME, transfer.username)
            try easy.set(CURLOPT_PASSWORD, transfer.password)
            try easy.set(CURLOPT_MAIL_FROM, "<\(transfer.from)>")
            try easy.set(CURLOPT_MAIL_RCPT, list: transfer.recipients.map { "<\($0)>" })
            easy.dropOldLists(keepingLast: 1)
            try easy.set(CURLOPT_UPLOAD, 1)
            try easy.setBody(transfer.message, asPostFields: false)
            do {
                try easy.perform()
            } catch let error as CurlError {
                throw SMTPError(curl: error, reply: easy.info(CURLINFO_RESPONSE_CODE), serverReply: easy.lastServerReply)
            }
            return easy.info(CURLINFO_RESPONSE_CODE)
        }
    }
}

/// An SMTP transfer failure with the server's last reply code (0 when none).
public struct SMTPError: Error, Sendable, CustomStringConvertible {
    public var curl: CurlError
    public var reply: Int
    /// The server's last reply line, when it sent one ("550 5.1.1 <x@y>: Recipient address rejected").
    public var serverReply: String?

    public init(curl: CurlError, reply: Int, serverReply: String? = nil) {
        self.curl = curl
        self.reply = reply
        self.serverReply = serverReply
    }

    /// The server's own words when it gave a failing reply, else libcurl's.
    public var description: String {
        if let serverReply, reply >= 400, serverReply.hasPrefix(String(reply)) { return "server replied \(serverReply)" }
        return reply > 0 ? "\(curl.message) (server replied \(reply))" : curl.message
    }
}

extension CurlEasy {
    /// Options set once per handle: the protocols it may speak.
    func configureOnce(protocols: String) throws {
        guard configuredProtocols != protocols else { return }
        try set(CURLOPT_PROTOCOLS_STR, protocols)
        try set(CURLOPT_REDIR_PROTOCOLS_STR, protocols)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        if protocols == "http,https", !CurlEasy.httpProxyInEnvironment {
            // libcurl looks for proxy variables (and no_proxy) on every transfer; with
            // none set, "no proxy" said once is the same answer without the lookups.
            try set(CURLOPT_PROXY, "")
            try set(CURLOPT_NOPROXY, "")
        }
        configuredProtocols = protocols
    }

    /// Whether any variable libcurl reads for an http(s) proxy is set (it ignores
    /// upper-case HTTP_PROXY); buzz never changes its own environment.
    static var httpProxyInEnvironment: Bool {
        let names: [String] = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
        return names.contains { getenv($0) != nil }
    }
}

extension CurlSession {
    /// Connects and authenticates without sending mail (CURLOPT_CONNECT_ONLY).
    public func verify(_ transfer: MailTransfer) async throws {
        try await run { easy in
            try easy.configureOnce(protocols: "smtp,smtps")
            try easy.recordServerReplies()
            try easy.set(CURLOPT_URL, transfer.url)
            try easy.set(CURLOPT_USE_SSL, Int((transfer.requireTLS ? CURLUSESSL_ALL : CURLUSESSL_NONE).rawValue))
            try easy.set(CURLOPT_TIMEOUT_MS, Int(transfer.timeout * 1_000))
            try easy.setSecurity(transfer.security)
            try easy.set(CURLOPT_USERNAME, transfer.username)
            try easy.set(CURLOPT_PASSWORD, transfer.password)
            try easy.set(CURLOPT_CONNECT_ONLY, 1)
            defer { try? easy.set(CURLOPT_CONNECT_ONLY, 0) }
            do {
                try easy.perform()
            } catch let error as CurlError {
                throw SMTPError(curl: error, reply: easy.info(CURLINFO_RESPONSE_CODE), serverReply: easy.lastServerReply)
            }
        }
    }
}
