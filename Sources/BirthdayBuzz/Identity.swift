/// Contact identity rules (docs/design/identity.md).
public enum ContactIdentity {
    /// The id of a card without a UID: `h-` + 16 hex digits of SHA-256 over the
    /// normalized name, a NUL, and the first email lowercased (else the first
    /// phone's digits).
    public static func derivedID(name: String, firstEmail: String?, firstPhone: String?) -> String {
        var bytes = Array(normalizedName(name).utf8)
        bytes.append(0)
        if let email = firstEmail, !email.isEmpty {
            bytes += Array(email.lowercased().utf8)
        } else if let phone = firstPhone {
            bytes += phone.utf8.filter { $0 >= 0x30 && $0 <= 0x39 }
        }
        return "h-" + SHA256.hex(bytes).prefix(16)
    }

    /// A name lowercased with runs of white space collapsed to one space and trimmed.
    public static func normalizedName(_ name: String) -> String {
        // Lowercase (ASCII and Latin-1 letters by hand, the rest through the
        // standard library), then collapse ASCII white space and NO-BREAK SPACE
        // in one pass over the bytes, written straight into the result.
        var source = name
        // Latin-1 only (no lead byte above 0xC3): every uppercase letter is
        // A-Z or U+00C0...U+00DE but U+00D7, and its lowercase is 0x20 further.
        let byHand = source.withUTF8 { bytes in
            for byte in bytes where byte >= 0xC4 { return false }
            return true
        }
        if !byHand { source = name.lowercased() }
        let capacity = source.utf8.count
        return source.withUTF8 { input in
            String(unsafeUninitializedCapacity: capacity) { out in
                var count = 0
                var pendingC2 = false
                var afterC3 = false
                for byte in input {
                    if pendingC2 {
                        pendingC2 = false
                        if byte == 0xA0 {
                            if count > 0, out[count - 1] != 0x20 { out[count] = 0x20; count += 1 }
                            afterC3 = false
                            continue
                        }
                        out[count] = 0xC2; count += 1
                    }
                    if byte == 0xC2 { pendingC2 = true; afterC3 = false; continue }
                    if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                        if count > 0, out[count - 1] != 0x20 { out[count] = 0x20; count += 1 }
                    } else if byHand, byte >= 0x41, byte <= 0x5A {
                        out[count] = byte + 0x20; count += 1
                    } else if byHand, afterC3, byte >= 0x80, byte <= 0x9E, byte != 0x97 {
                        out[count] = byte + 0x20; count += 1
                    } else {
                        out[count] = byte; count += 1
                    }
                    afterC3 = byte == 0xC3
                }
                if pendingC2 { out[count] = 0xC2; count += 1 }
                if count > 0, out[count - 1] == 0x20 { count -= 1 }
                return count
            }
        }
    }

    /// The name shown for a card with neither FN nor N.
    public static func unknownName(id: String) -> String {
        "Unknown Contact " + id.suffix(6)
    }
}

/// A problem with one card of an import: which card, and what is wrong.
public struct CardProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based position of the card in its file (the row for CSV).
    public var cardNumber: Int
    public var uid: String?
    public var message: String

    public init(cardNumber: Int, uid: String? = nil, message: String) {
        self.cardNumber = cardNumber
        self.uid = uid
        self.message = message
    }

    /// `card 37 (UID x): BDAY "1990-02-30" is not a date`; the caller prefixes the file.
    /// Card number 0 is the whole file (`holds no vCard`).
    public var description: String {
        guard cardNumber > 0 else { return message }
        return "card \(cardNumber)" + (uid.map { " (UID \($0))" } ?? "") + ": " + message
    }
}

/// One entry of an import stream: a card (possibly with problems that did not
/// stop it, such as an impossible BDAY), or a card that had to be skipped.
public enum ImportEntry: Sendable {
    /// `indirect`: the card is boxed, so handing an entry on (between the import's
    /// threads) is one reference count, not one per string the card holds.
    indirect case card(ContactCard, problems: [CardProblem])
    case skipped(CardProblem)
}
