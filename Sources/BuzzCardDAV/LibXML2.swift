import BuzzSystem

/// libxml2's pull parser (`xmlTextReader`), opened with `dlopen` when a
/// CardDAV reply is first read, like libcurl and libdbus: linking it (as
/// FoundationXML does) maps libxml2 and ICU's 30 MB of data into every
/// command, a `buzz send` included, and stops the binary from starting at all
/// where libxml2 is missing. Debian: libxml2 (a dependency of libcurl's
/// neighbours on any desktop; `apt-get install libxml2`).
///
/// The functions are declared here by hand: each is a plain C call on
/// pointers and ints, stable since libxml2 2.6. No options that read the
/// network (`XML_PARSE_NONET`), load DTDs or substitute entities are set, so
/// an entity in a reply stays an unexpanded reference (no file is read, no
/// "billion laughs"), and libxml2's own limits (depth 256, 10 MB per text
/// node) hold.
struct LibXML2: Sendable {
    typealias Reader = OpaquePointer

    let readerForMemory: @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> Reader?
    let read: @convention(c) (Reader?) -> Int32
    let nodeType: @convention(c) (Reader?) -> Int32
    let isEmptyElement: @convention(c) (Reader?) -> Int32
    let localName: @convention(c) (Reader?) -> UnsafePointer<CChar>?
    let namespaceURI: @convention(c) (Reader?) -> UnsafePointer<CChar>?
    let value: @convention(c) (Reader?) -> UnsafePointer<CChar>?
    let free: @convention(c) (Reader?) -> Void
    /// `xmlTextReaderSetStructuredErrorHandler`: errors go to us, not to stderr.
    let setErrorHandler: @convention(c) (Reader?, (@convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Void)?,
                                         UnsafeMutableRawPointer?) -> Void

    /// `xmlParserOption` values (parser.h).
    static let noNetwork: Int32 = 1 << 11       // XML_PARSE_NONET
    static let noWarnings: Int32 = 1 << 6       // XML_PARSE_NOWARNING
    static let cdataAsText: Int32 = 1 << 14     // XML_PARSE_NOCDATA

    /// `xmlReaderTypes` values (xmlreader.h).
    enum NodeType: Int32 {
        case element = 1, text = 3, cdata = 4, whitespace = 13, significantWhitespace = 14, endElement = 15
    }

    /// The library, loaded once; the error says how to install it.
    static let shared: Result<LibXML2, SharedLibrary.LoadError> = Result { () throws(SharedLibrary.LoadError) in try LibXML2() }

    private init() throws(SharedLibrary.LoadError) {
        let library = try SharedLibrary(soname: "libxml2.so.2", name: "libxml2", package: "libxml2")
        readerForMemory = try library.function("xmlReaderForMemory")
        read = try library.function("xmlTextReaderRead")
        nodeType = try library.function("xmlTextReaderNodeType")
        isEmptyElement = try library.function("xmlTextReaderIsEmptyElement")
        localName = try library.function("xmlTextReaderConstLocalName")
        namespaceURI = try library.function("xmlTextReaderConstNamespaceUri")
        value = try library.function("xmlTextReaderConstValue")
        free = try library.function("xmlFreeTextReader")
        setErrorHandler = try library.function("xmlTextReaderSetStructuredErrorHandler")
        // Once, before any thread parses (libxml2's own advice for threaded programs).
        let initParser: @convention(c) () -> Void = try library.function("xmlInitParser")
        initParser()
    }
}

/// Where the structured error handler leaves the first error (its `arg`).
final class XMLErrorSink {
    var message: String?

    /// libxml2's `xmlError`: `int domain; int code; char *message; …`.
    static let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Void = { context, error in
        guard let context, let error else { return }
        let sink = Unmanaged<XMLErrorSink>.fromOpaque(context).takeUnretainedValue()
        guard sink.message == nil else { return }
        let text = error.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? "not well-formed XML"
        sink.message = text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
