/// `type = "carddav"`: the address books on a CardDAV server (RFC 6352), kept
/// in step by `sync`, `tick` (once `interval` has passed) and `run` (every
/// `interval`). The password follows the channels' secret rules.
public struct CardDAVSourceOptions: SourceOptions, Equatable {
    public static let typeName = "carddav"

    /// The server, a principal, or one address book.
    public var url: String
    public var username: String?
    /// Where the password comes from (`password_env`, `password_file`, `password_command`).
    public var password: ChannelConfig.SecretSource?
    /// Display names or hrefs of the address books to read; empty: all of them.
    public var books: [String]
    /// Seconds between syncs by the clock (`run`, `tick`).
    public var interval: Int
    public var insecure: Bool
    public var caFile: String?
    /// `set-birthday` / `clear-birthday` change the card on the server.
    public var writeBack: Bool
    /// Seconds one request may take.
    public var timeout: Int

    public static let defaultInterval = 15 * 60

    public init(url: String, username: String? = nil, password: ChannelConfig.SecretSource? = nil, books: [String] = [],
                interval: Int = CardDAVSourceOptions.defaultInterval, insecure: Bool = false, caFile: String? = nil,
                writeBack: Bool = false, timeout: Int = 60) {
        self.url = url
        self.username = username
        self.password = password
        self.books = books
        self.interval = interval
        self.insecure = insecure
        self.caFile = caFile
        self.writeBack = writeBack
        self.timeout = timeout
    }

    init(table: TableReader) throws {
        guard let url = try table.string("url"), !url.isEmpty else {
            throw table.problem("url", "missing: the server, e.g. \"https://cloud.example.com/remote.php/dav\"")
        }
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw table.problem("url", "must start with https:// (or http:// for a server on this machine)")
        }
        var secrets: [ChannelConfig.SecretSource] = []
        if let env = try table.string("password_env") { secrets.append(.environment(env)) }
        if let file = try table.string("password_file") { secrets.append(.file(file)) }
        if let command = try table.stringArray("password_command") {
            guard !command.isEmpty else { throw table.problem("password_command", "must name a program") }
            secrets.append(.command(command))
        }
        guard secrets.count <= 1 else {
            throw table.problem("password_env", "give only one of password_env, password_file, password_command")
        }
        if (try? table.string("password")) != nil {
            throw table.problem("password", "inline passwords are not read; use password_env, password_file or password_command")
        }
        let username = try table.string("username")
        if !secrets.isEmpty, username == nil {
            throw table.problem("username", "missing: a password needs the username it goes with")
        }
        let interval = try table.duration("interval") ?? CardDAVSourceOptions.defaultInterval
        guard interval >= 60 else { throw table.problem("interval", "must be at least 1m") }
        let timeout = try table.duration("timeout") ?? 60
        guard timeout >= 1 else { throw table.problem("timeout", "must be at least 1s") }
        self.init(url: url, username: username, password: secrets.first, books: try table.stringArray("books") ?? [],
                  interval: interval, insecure: try table.bool("insecure") ?? false, caFile: try table.string("ca_file"),
                  writeBack: try table.bool("write_back") ?? false, timeout: timeout)
    }
}
