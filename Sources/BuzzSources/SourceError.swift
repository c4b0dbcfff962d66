/// A source that cannot be read, as one line that names it. `request`: the
/// input itself is wrong (no such file, not a vCard) and `import` exits 2;
/// `runtime`: reading failed (an I/O error) and retrying may help.
public struct SourceError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable { case request, runtime }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    static func request(_ message: String) -> SourceError { SourceError(.request, message) }
    static func runtime(_ message: String) -> SourceError { SourceError(.runtime, message) }

    public var description: String { message }
}
