import BirthdayBuzz
import BuzzChannels
import BuzzSources

extension ConfigTypes {
    /// The channel and source types `buzz` ships, as the CLI hands them to the loader.
    static let shipped = ConfigTypes(channels: ChannelRegistry().configTypes, sources: SourceRegistry().configTypes)
}
