/// Text for a field that is read as Pango markup, such as waybar's `text` and
/// `tooltip` (its `escape` option is off by default): `&`, `<`, `>` and both
/// quotes become entities, as GLib's `g_markup_escape_text` writes them, so a
/// contact named `Tom & Jerry` shows as written and `<span size="50000">` in a
/// name is shown, not applied. Everything else, line breaks included, stays.
///
/// ```swift
/// PangoMarkup.escaped("Tom & <b>Jerry</b>")  // "Tom &amp; &lt;b&gt;Jerry&lt;/b&gt;"
/// ```
public enum PangoMarkup {
    public static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
