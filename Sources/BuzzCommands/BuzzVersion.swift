/// The version, in this one place (the man page and packages take it from
/// `buzz --version`), and the commit the BuildInfo plugin found at build time.
enum BuzzVersion {
    static let number = "0.1.0"

    /// `buzz 0.1.0 (1a2b3c4d5e6f)`: what `buzz --version` prints.
    static var line: String { "buzz \(number) (\(buildCommit))" }
}
