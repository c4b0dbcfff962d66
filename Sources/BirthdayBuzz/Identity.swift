/// Contact identity rules (DESIGN §3).
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
        // Lowercase (ASCII by hand, the rest through the standard library), then
        // collapse ASCII white space and NO-BREAK SPACE in one pass over the bytes,
        // written straight into the result (no intermediate array).
        var source = name
        let isASCII = source.withUTF8 { bytes in
            var or: UInt8 = 0
            for byte in bytes { or |= byte }
            return or < 0x80
        }
        if !isASCII { source = name.lowercased() }
        let capacity = source.utf8.count
        return source.withUTF8 { input in
            String(unsafeUninitializedCapacity: capacity) { out in
                var count = 0
                var pendingC2 = false
                for byte in input {
                    if pendingC2 {
                        pendingC2 = false
                        if byte == 0xA0 {
                            if count > 0, out[count - 1] != 0x20 { out[count] = 0x20; count += 1 }
                            continue
                        }
                        out[count] = 0xC2; count += 1
                    }
                    if byte == 0xC2 { pendingC2 = true; continue }
                    if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                        if count > 0, out[count - 1] != 0x20 { out[count] = 0x20; count += 1 }
                    } else {
                        out[count] = isASCII && byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                        count += 1
                    }
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
    public var description: String {
        "card \(cardNumber)" + (uid.map { " (UID \($0))" } ?? "") + ": " + message
    }
}

/// One entry of an import stream: a card (possibly with problems that did not
/// stop it, such as an impossible BDAY), or a card that had to be skipped.
public enum ImportEntry: Sendable {
    case card(ContactCard, problems: [CardProblem])
    case skipped(CardProblem)
}
