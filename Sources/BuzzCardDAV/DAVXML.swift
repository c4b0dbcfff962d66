import BirthdayBuzz
import BuzzSystem
import Foundation

/// XML namespaces CardDAV speaks.
enum DAVNamespace {
    static let dav = "DAV:"
    static let cardDAV = "urn:ietf:params:xml:ns:carddav"
    static let calendarServer = "http://calendarserver.org/ns/"
}

/// One element of a parsed WebDAV reply: its namespace-qualified name, its
/// own text (character data directly inside it) and its child elements.
struct DAVElement: Sendable {
    var namespace: String
    var name: String
    var text: String
    var children: [DAVElement]

    /// The first child with that name.
    func child(_ name: String, _ namespace: String = DAVNamespace.dav) -> DAVElement? {
        children.first { $0.name == name && $0.namespace == namespace }
    }

    /// Every child with that name.
    func children(_ name: String, _ namespace: String = DAVNamespace.dav) -> [DAVElement] {
        children.filter { $0.name == name && $0.namespace == namespace }
    }

    func `is`(_ name: String, _ namespace: String = DAVNamespace.dav) -> Bool {
        self.name == name && self.namespace == namespace
    }

    /// The text without surrounding white space (hrefs, ETags, tokens).
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// The XML could not be read; `reason` is the parser's, on one line.
struct MalformedXML: Error, Sendable {
    var reason: String
}

/// Reads XML with libxml2's pull parser (`LibXML2`, loaded on first use; no
/// network, no DTD, entities left unexpanded) into a `DAVElement` tree. Never
/// traps on bad input; depth is bounded, so a hostile reply nesting elements
/// without end cannot exhaust memory through the stack.
enum DAVXML {
    static let maxDepth = 256

    static func parse(_ bytes: [UInt8]) throws(MalformedXML) -> DAVElement {
        let xml: LibXML2
        switch LibXML2.shared {
        case .success(let library): xml = library
        case .failure(let error): throw MalformedXML(reason: error.description)
        }
        guard !bytes.isEmpty else { throw MalformedXML(reason: "an empty reply, not XML") }
        guard bytes.count <= Int(Int32.max) else { throw MalformedXML(reason: "a reply of more than 2 GB") }
        let sink = XMLErrorSink()
        var stack: [DAVElement] = []
        var root: DAVElement?
        var failure: String?
        withExtendedLifetime(sink) {
            bytes.withUnsafeBufferPointer { buffer in
                let options = LibXML2.noNetwork | LibXML2.noWarnings | LibXML2.cdataAsText
                let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                guard let reader = xml.readerForMemory(base, Int32(buffer.count), nil, nil, options) else {
                    failure = "libxml2 could not start reading"
                    return
                }
                defer { xml.free(reader) }
                xml.setErrorHandler(reader, XMLErrorSink.handler, Unmanaged.passUnretained(sink).toOpaque())
                func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
                func close() {
                    guard let element = stack.popLast() else { return }
                    if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
                }
                while true {
                    let step = xml.read(reader)
                    if step == 0 { break }
                    guard step == 1 else {
                        failure = sink.message ?? "not well-formed XML"
                        return
                    }
                    switch LibXML2.NodeType(rawValue: xml.nodeType(reader)) {
                    case .element:
                        guard stack.count < maxDepth else {
                            failure = "elements nested deeper than \(maxDepth)"
                            return
                        }
                        stack.append(DAVElement(namespace: string(xml.namespaceURI(reader)), name: string(xml.localName(reader)),
                                                text: "", children: []))
                        if xml.isEmptyElement(reader) == 1 { close() }
                    case .endElement:
                        close()
                    case .text, .cdata, .whitespace, .significantWhitespace:
                        if !stack.isEmpty { stack[stack.count - 1].text += string(xml.value(reader)) }
                    case nil:
                        break  // comments, processing instructions, entity references: not ours
                    }
                }
            }
        }
        if let failure { throw MalformedXML(reason: failure) }
        guard let root, stack.isEmpty else { throw MalformedXML(reason: sink.message ?? "no document element") }
        return root
    }
}

/// One `<response>` of a 207 Multi-Status reply.
struct DAVResponse: Sendable {
    /// The href as the server wrote it (a path, or an absolute URL).
    var href: String
    /// The response-level status (sync-collection marks removed members 404 here).
    var status: Int?
    /// The properties the server found (propstat 200), by name.
    var properties: [DAVElement]
    /// Properties reported missing or forbidden (other propstats), by name.
    var missing: [String]

    func property(_ name: String, _ namespace: String = DAVNamespace.dav) -> DAVElement? {
        properties.first { $0.is(name, namespace) }
    }

    /// The property's text, trimmed; nil when absent or empty.
    func text(_ name: String, _ namespace: String = DAVNamespace.dav) -> String? {
        guard let value = property(name, namespace)?.trimmedText, !value.isEmpty else { return nil }
        return value
    }

    /// Whether `resourcetype` holds the named type.
    func hasResourceType(_ name: String, _ namespace: String) -> Bool {
        property("resourcetype")?.child(name, namespace) != nil
    }

    /// The href inside a property (`<current-user-principal><href>…`).
    func hrefs(in name: String, _ namespace: String = DAVNamespace.dav) -> [String] {
        (property(name, namespace)?.children("href") ?? []).map(\.trimmedText).filter { !$0.isEmpty }
    }
}

/// A parsed 207 Multi-Status reply.
struct Multistatus: Sendable {
    var responses: [DAVResponse]
    /// The sync-collection's new token.
    var syncToken: String?

    init(_ root: DAVElement) throws(MalformedXML) {
        guard root.is("multistatus") else {
            throw MalformedXML(reason: "expected a DAV multistatus, found <\(root.name)>")
        }
        syncToken = root.child("sync-token").map(\.trimmedText).flatMap { $0.isEmpty ? nil : $0 }
        responses = root.children("response").compactMap { element in
            guard let href = element.child("href")?.trimmedText, !href.isEmpty else { return nil }
            var properties: [DAVElement] = []
            var missing: [String] = []
            for propstat in element.children("propstat") {
                let ok = propstat.child("status").map { Multistatus.statusCode($0.trimmedText) == 200 } ?? true
                for prop in propstat.children("prop") {
                    if ok { properties += prop.children } else { missing += prop.children.map(\.name) }
                }
            }
            return DAVResponse(href: href, status: element.child("status").flatMap { Multistatus.statusCode($0.trimmedText) },
                               properties: properties, missing: missing)
        }
    }

    /// 404 from "HTTP/1.1 404 Not Found".
    static func statusCode(_ line: String) -> Int? {
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }
}

/// Escapes text for an XML element's content: the same five entities as
/// Pango markup (which is XML), so one function does both.
func xmlEscaped(_ text: String) -> String {
    PangoMarkup.escaped(text)
}
