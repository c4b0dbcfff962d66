import BirthdayBuzz
import Logging

/// Keeps every log record on one line (docs/design/command-line.md): a message quoting a value
/// with a line break in it (a config value, a server reply) is written with the
/// break escaped (`OneLine.escaped`), so journald and log readers see one record.
struct OneLineLogHandler: LogHandler {
    private var inner: any LogHandler

    init(_ inner: any LogHandler) {
        self.inner = inner
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(OneLine.escaped(event.message.description))"
        inner.log(event: event)
    }
}
