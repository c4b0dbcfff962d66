import CurlSupport
import BuzzTestKit
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Whether a real Radicale can run here (docs/design/testing.md): skipped with a clear
/// comment when it cannot, unless `BUZZ_REQUIRE_SERVERS=1`, which makes a
/// missing Radicale a failure instead of a silent pass.
enum RadicaleGate {
    static var required: Bool { ProcessInfo.processInfo.environment["BUZZ_REQUIRE_SERVERS"] == "1" }

    /// Debian's python3-radicale lives under /usr/bin/python3 (scripts/deps.sh
    /// test installs it); `BUZZ_RADICALE_PYTHON` names another (PyPI's Radicale in a venv).
    static let python = ProcessInfo.processInfo.environment["BUZZ_RADICALE_PYTHON"] ?? "/usr/bin/python3"

    static let available = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
        && PythonModules.available("radicale", python: python)

    static var allows: Bool { required || available }
    static let comment: Comment = "needs Radicale (scripts/deps.sh test installs python3-radicale) and openssl"
}

struct RadicaleError: Error, CustomStringConvertible {
    var description: String
}

/// One request Radicale was asked (the wrapper's record).
struct RadicaleRequest: Sendable, Equatable, Decodable {
    var method: String
    var path: String
    var depth: String?
    var report: String?
    var status: Int?

    /// "REPORT sync-collection 207", "PROPFIND /alice/ 207"…
    var summary: String { method + " " + (report ?? path) + " " + (status.map(String.init) ?? "-") }
}

/// A real Radicale on 127.0.0.1 (`Servers/radicale_server.py`), with htpasswd
/// users and a fresh storage folder, over plain HTTP or TLS with a CA made for
/// it. Stopped by `stop()` or on deinit; it also exits when the test process
/// dies (it watches its stdin).
final class RadicaleServer: Sendable {
    let port: Int
    let tls: Bool
    /// The folder holding storage, certificates and logs; removed by `stop()`.
    let directory: URL
    /// The CA certificate that signed the server's (with `tls`).
    let caFile: String?
    let user = "alice"
    let password = "s3cret-pass phrase"
    private let server: PythonServer
    /// Sets up books and cards for the tests (not the client under test).
    private let setup: CurlSession

    private init(_ server: PythonServer, tls: Bool, caFile: String?) {
        self.server = server
        port = server.port
        directory = server.directory
        self.tls = tls
        self.caFile = caFile
        setup = CurlSession(label: "radicale-setup-\(port)")
    }

    deinit { stop() }

    var url: String { (tls ? "https" : "http") + "://127.0.0.1:\(port)" }
    var storage: URL { directory.appendingPathComponent("storage/collections/collection-root") }

    static func start(tls: Bool = false) async throws -> RadicaleServer {
        let fileManager = FileManager.default
        let directory = TestFolders.temporary.appendingPathComponent("buzz-radicale-" + UUID().uuidString.lowercased())
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = Bundle.module.resourceURL!.appendingPathComponent("Servers/radicale_server.py").path
        var arguments = ["--storage", directory.appendingPathComponent("storage").path,
                         "--users", "alice:s3cret-pass phrase,bob:bobs-password"]
        var caFile: String?
        if tls {
            let (ca, certificate, key) = try makeCertificates(in: directory)
            arguments += ["--tls", certificate, key]
            caFile = ca
        }
        // launchServer removes the folder when the server does not start.
        return RadicaleServer(try await launchServer(script, arguments, in: directory), tls: tls, caFile: caFile)
    }

    /// A CA, and a certificate for 127.0.0.1 it signed: the client trusts the CA (`ca_file`).
    private static func makeCertificates(in directory: URL) throws -> (ca: String, certificate: String, key: String) {
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let extensions = path("ext.cnf")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=BirthdayBuzz test CA", "-days", "1",
             "-keyout", path("ca.key"), "-out", path("ca.pem")],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", path("server.key"), "-out", path("server.csr")],
            ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
             "-days", "1", "-extfile", extensions, "-out", path("server.pem")],
        ]
        for step in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = step
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw RadicaleError(description: "openssl \(step[0]) failed") }
        }
        return (path("ca.pem"), path("server.pem"), path("server.key"))
    }

    /// Kills Radicale and removes its folder. Idempotent.
    func stop() { server.stop() }

    // MARK: - Setting up the server's side

    /// A request as alice (or `user`), outside the client under test.
    @discardableResult
    func request(_ method: String, _ path: String, body: String = "", headers: [(String, String)] = [],
                 as user: String? = nil, password: String? = nil) async throws -> HTTPResponse {
        let credentials = (user ?? self.user) + ":" + (password ?? self.password)
        var fields = headers.map { (name: $0.0, value: $0.1) }
        fields.append((name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString()))
        return try await setup.http(HTTPRequest(url: url + path, method: method, headers: fields, body: Array(body.utf8),
                                                timeout: 30, security: TransferSecurity(caFile: caFile), responseLimit: 64 << 20))
    }

    /// Makes the address book `/alice/NAME/` with a display name.
    func makeBook(_ name: String, displayName: String) async throws {
        let body = """
        <?xml version="1.0"?><D:mkcol xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:set><D:prop>\
        <D:resourcetype><D:collection/><C:addressbook/></D:resourcetype><D:displayname>\(displayName)</D:displayname>\
        </D:prop></D:set></D:mkcol>
        """
        let response = try await request("MKCOL", "/\(user)/\(name)/", body: body, headers: [("Content-Type", "application/xml")])
        guard response.status == 201 else { throw RadicaleError(description: "MKCOL \(name) answered \(response.status)") }
    }

    /// PUTs a card; returns its ETag.
    @discardableResult
    func putCard(_ book: String, _ file: String, _ text: String) async throws -> String? {
        let response = try await request("PUT", "/\(user)/\(book)/\(file)", body: text, headers: [("Content-Type", "text/vcard")])
        guard [201, 204].contains(response.status) else { throw RadicaleError(description: "PUT \(file) answered \(response.status)") }
        return response.header("ETag")
    }

    func deleteCard(_ book: String, _ file: String) async throws {
        let response = try await request("DELETE", "/\(user)/\(book)/\(file)")
        guard [200, 204].contains(response.status) else { throw RadicaleError(description: "DELETE \(file) answered \(response.status)") }
    }

    /// What Radicale was asked since the last `clearRequests()`.
    func requests() async throws -> [RadicaleRequest] {
        let response = try await setup.http(HTTPRequest(url: url + "/__requests", method: "GET", timeout: 10,
                                                        security: TransferSecurity(caFile: caFile), responseLimit: 16 << 20))
        return try JSONDecoder().decode([RadicaleRequest].self, from: Data(response.body))
    }

    /// From now on every request (or only REPORTs of kind `report`, such as
    /// `addressbook-multiget`) is answered `status` instead of by Radicale, until `answerNormally()`.
    func fail(status: Int, report: String? = nil) async throws {
        var control: [String: any Sendable] = ["status": status]
        if let report { control["report"] = report }
        let body = try JSONSerialization.data(withJSONObject: control)
        _ = try await setup.http(HTTPRequest(url: url + "/__fail", method: "PUT", body: Array(body), timeout: 10,
                                             security: TransferSecurity(caFile: caFile)))
    }

    /// Radicale answers every request again.
    func answerNormally() async throws {
        _ = try await setup.http(HTTPRequest(url: url + "/__fail", method: "DELETE", timeout: 10,
                                             security: TransferSecurity(caFile: caFile)))
    }

    func clearRequests() async throws {
        _ = try await setup.http(HTTPRequest(url: url + "/__requests", method: "DELETE", timeout: 10,
                                             security: TransferSecurity(caFile: caFile)))
    }
}

/// What the CardDAV test servers import, loaded once by their `PythonStarter`:
/// Radicale with every plugin and request handler it loads lazily (0.15 s of CPU
/// a fresh start spends, of 0.17 s to serve a first sync), and http.server for
/// the scripted server.
private let serverModules = PythonStarter.Preload(
    modules: ["argparse", "json", "re", "socketserver", "ssl", "threading", "urllib.parse", "wsgiref.simple_server",
              "http.server", "xml.sax.saxutils", "vobject"],
    packages: ["radicale"])

/// Starts `RadicaleGate.python script arguments…` with its outputs in `directory`
/// and waits (up to 30 s) for its `READY <port>` line (`PythonServer.launch`).
func launchServer(_ script: String, _ arguments: [String], in directory: URL) async throws -> PythonServer {
    try await PythonServer.launch(python: RadicaleGate.python, script: script, arguments: arguments, preload: serverModules,
                                  directory: directory, timeout: .seconds(30))
}

/// `Servers/scripted_server.py`: answers each path as the test scripted it
/// (for what a real Radicale cannot be made to do: foreign redirects, bad XML, 5xx).
final class ScriptedServer: Sendable {
    let port: Int
    let directory: URL
    private let server: PythonServer

    /// `script`: path → ["status": Int, "headers": [String: String], "body": String]; "{port}" is replaced.
    init(_ script: [String: [String: any Sendable]]) async throws {
        directory = TestFolders.temporary.appendingPathComponent("buzz-scripted-" + UUID().uuidString.lowercased())
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptFile = directory.appendingPathComponent("script.json")
        try JSONSerialization.data(withJSONObject: script).write(to: scriptFile)
        let server = Bundle.module.resourceURL!.appendingPathComponent("Servers/scripted_server.py").path
        self.server = try await launchServer(server, [scriptFile.path], in: directory)
        port = self.server.port
    }

    deinit { stop() }

    var url: String { "http://127.0.0.1:\(port)" }

    func stop() { server.stop() }

    /// One request the scripted server was asked.
    struct Request: Decodable, Sendable {
        var method: String
        var path: String
        /// Whether it carried an Authorization header.
        var auth: Bool
        /// The `<D:href>`s of a multiget.
        var hrefs: [String]
        /// The request body as UTF-8 text (a PUT's card, byte for byte).
        var body: String?
    }

    private static let session = CurlSession(label: "scripted-server-test")

    /// Everything asked so far.
    func requests() async throws -> [Request] {
        let response = try await Self.session.http(HTTPRequest(url: url + "/__requests", method: "GET", timeout: 10, responseLimit: 16 << 20))
        return try JSONDecoder().decode([Request].self, from: Data(response.body))
    }

    /// Replaces the script (the server's answers from now on).
    func replace(_ script: [String: [String: any Sendable]]) async throws {
        let body = try JSONSerialization.data(withJSONObject: script)
        _ = try await Self.session.http(HTTPRequest(url: url + "/__script", method: "PUT", body: Array(body), timeout: 10))
    }
}

/// A small vCard 3.0.
func card(_ uid: String, _ name: String, birthday: String? = "1990-05-17", extra: String = "") -> String {
    "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\nN:\(name);;;;\r\n"
        + (birthday.map { "BDAY:\($0)\r\n" } ?? "") + extra + "END:VCARD\r\n"
}

