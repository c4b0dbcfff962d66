import BirthdayBuzz

/// Maps a source `type` to the code that reads it. Adding a type is one file
/// plus one line in `standardBuilders` (and its options in BirthdayBuzz's
/// `SourceConfig.parsers`).
public struct SourceRegistry: Sendable {
    public typealias Builder = @Sendable (SourceConfig, SourceContext) throws -> any ContactSourceType

    public var builders: [String: Builder]

    public init(builders: [String: Builder] = SourceRegistry.standardBuilders) {
        self.builders = builders
    }

    public static let standardBuilders: [String: Builder] = [
        VdirSourceOptions.typeName: VdirSource.make,
        FileSourceOptions.typeName: FileSource.make,
        CardDAVSourceOptions.typeName: CardDAVSource.make,
    ]

    /// Builds the reader for a `[sources.NAME]` table.
    public func make(_ config: SourceConfig, context: SourceContext) throws -> any ContactSourceType {
        guard let builder = builders[config.typeName] else {
            throw SourceError.request("sources.\(config.name): no reader for source type \"\(config.typeName)\"")
        }
        var scoped = context
        scoped.scrubber = context.scrubber.scoped(to: "sources." + config.name)
        return try builder(config, scoped)
    }

    static func options<T: SourceOptions>(_ config: SourceConfig, as _: T.Type) throws -> T {
        guard let options = config.options as? T else {
            throw SourceError.request("sources.\(config.name): source options do not match its type")
        }
        return options
    }
}
