import CCurl
import Foundation

/// libcurl, loaded on first use with `dlopen` instead of being linked.
///
/// Loading libcurl.so.4 maps ~35 shared libraries (TLS, SSH, LDAP, Kerberos…)
/// and runs their constructors, about 5 ms here — a third of a cold `buzz send`.
/// Commands that never reach the network (`list`, `upcoming`, `import`, the
/// console and dbus channels) skip it entirely. (Loading it on a second thread
/// while `send` reads its config was tried: the two threads' page faults and
/// mappings contend, and the send got no faster.)
///
/// `@unchecked Sendable`: `api` is written once, before the instance is shared,
/// and only read afterwards.
final class CurlLibrary: @unchecked Sendable {
    /// The soname Debian's libcurl4 (OpenSSL flavour) installs.
    static let soname = "libcurl.so.4"

    let api: UnsafeMutablePointer<CCurl_api>

    /// The process's libcurl, loaded and `curl_global_init`-ed exactly once
    /// (Swift initializes globals once, thread-safely: a second caller waits).
    static let shared: Result<CurlLibrary, CurlError> = load()

    /// The loaded library, or an error saying what is missing.
    static func get() throws(CurlError) -> CurlLibrary {
        try shared.get()
    }

    private init(api: UnsafeMutablePointer<CCurl_api>) {
        self.api = api
    }

    private static func load() -> Result<CurlLibrary, CurlError> {
        guard let handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? soname + ": cannot be loaded"
            return .failure(CurlError(setup: "libcurl is not available (\(reason)); install it with: apt-get install libcurl4"))
        }
        var table = CCurl_api()
        var missing: [String] = []
        func symbol(_ name: String) -> UnsafeMutableRawPointer? {
            guard let pointer = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return pointer
        }
        table.global_init = symbol("curl_global_init")
        table.easy_init = symbol("curl_easy_init")
        table.easy_cleanup = symbol("curl_easy_cleanup")
        table.easy_perform = symbol("curl_easy_perform")
        table.easy_strerror = symbol("curl_easy_strerror")
        table.easy_setopt = symbol("curl_easy_setopt")
        table.easy_getinfo = symbol("curl_easy_getinfo")
        table.slist_append = symbol("curl_slist_append")
        table.slist_free_all = symbol("curl_slist_free_all")
        guard missing.isEmpty else {
            return .failure(CurlError(setup: "\(soname) lacks \(missing.joined(separator: ", ")); it is too old or not libcurl"))
        }
        let api = UnsafeMutablePointer<CCurl_api>.allocate(capacity: 1)
        api.initialize(to: table)
        let code = CCurl_global_init(api, Int(CURL_GLOBAL_DEFAULT))
        guard code == CURLE_OK else {
            let message = String(cString: CCurl_easy_strerror(api, code))
            return .failure(CurlError(setup: "libcurl could not be initialised (\(message))"))
        }
        // The library stays loaded (and `api` allocated) for the life of the process.
        return .success(CurlLibrary(api: api))
    }
}

