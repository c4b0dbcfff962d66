import BirthdayBuzz
import BuzzStore

/// A source whose cards can be changed from here: `set-birthday` and
/// `clear-birthday` write the birthday back to where the card lives
/// (docs/design/sources.md, write-back). A source type adopts it when it can; the
/// commands ask a built source for this protocol and never name a type. The
/// carddav source adopts it; a vdir or a file is read only.
public protocol BirthdayWriteBack: ContactSourceType {
    /// Whether this source's config asks for write-back (a carddav source's
    /// `write_back = true`); when false the commands change the store only.
    var writesBack: Bool { get }

    /// Writes `birthday` (nil: no birthday) into the card of `contactID` where
    /// the source keeps it, and records the card as written in `store`. Throws a
    /// `SourceError` (one line, no secret) when it cannot; the local decision
    /// the command recorded stays.
    func writeBirthday(_ birthday: Birthday?, contactID: String, store: BuzzDatabase, now: Int64,
                       includeByDefault: Bool) throws
}
