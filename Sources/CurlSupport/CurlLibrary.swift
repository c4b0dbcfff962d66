import BuzzSystem
import CCurl
import Foundation
import Synchronization

/// libcurl, loaded on first use with `dlopen` instead of being linked.
///
/// Loading libcurl.so.4 maps ~35 shared libraries (TLS, SSH, LDAP, Kerberos…)
/// and runs their constructors, about 5 ms here — a third of a cold `buzz send`.
/// Commands that never reach the network (`list`, `upcoming`, `import`, the
/// console and dbus channels) skip it entirely.
///
/// A cold `buzz send` loads it on its only thread, after the config
/// (SendFastPath.swift, `runAsProcess`). Loading it on a second thread while
/// the config is read was tried three ways, and none gained anything measurable
/// (2026-11-28, 150 interleaved runs each): on the main thread while the command
/// ran on Swift's pool (`dlopen` holds the loader's lock throughout and
/// `pthread_create` needs it for the new thread's TLS: the pool's first thread
/// waited ~5 ms in `pthread_create`); on a thread started by the command (that
/// thread starts 1–4 ms late on this VM's idle second vCPU, and the two
/// threads' page faults slow each other: 0.3 ms gained of ~2 ms overlapped);
/// and from a C constructor before the Swift runtime starts (the runtime's
/// backtracer set-up and lazy symbol binding then wait for the loader's lock:
/// 2 % of a send).
///
/// `@unchecked Sendable`: `api` is written once, before the instance is shared,
/// and only read afterwards.
final class CurlLibrary: @unchecked Sendable {
    /// The soname Debian's libcurl4 (OpenSSL flavour) installs.
    static let soname = "libcurl.so.4"

    let api: UnsafeMutablePointer<CCurl_api>

    /// The process's libcurl, loaded and `curl_global_init`-ed exactly once
    /// (a second caller waits on the lock). A failure is kept too, except one
    /// for want of a file descriptor: a daemon tries again on its next pass.
    private static let shared = Mutex<Result<CurlLibrary, CurlError>?>(nil)

    /// The loaded library, or an error saying what is missing.
    static func get() throws(CurlError) -> CurlLibrary {
        try shared.withLock { cached in
            if let cached { return cached }
            let result = load()
            if case .failure(let error) = result, error.message.contains("too many open files") { return result }
            cached = result
            return result
        }.get()
    }

    private init(api: UnsafeMutablePointer<CCurl_api>) {
        self.api = api
    }

    private static func load() -> Result<CurlLibrary, CurlError> {
        var table = CCurl_api()
        do throws(SharedLibrary.LoadError) {
            let library = try SharedLibrary(soname: soname, name: "libcurl", package: "libcurl4")
            table.global_init = try library.address("curl_global_init")
            table.easy_init = try library.address("curl_easy_init")
            table.easy_cleanup = try library.address("curl_easy_cleanup")
            table.easy_strerror = try library.address("curl_easy_strerror")
            table.easy_setopt = try library.address("curl_easy_setopt")
            table.easy_getinfo = try library.address("curl_easy_getinfo")
            table.slist_append = try library.address("curl_slist_append")
            table.slist_free_all = try library.address("curl_slist_free_all")
            table.multi_init = try library.address("curl_multi_init")
            table.multi_cleanup = try library.address("curl_multi_cleanup")
            table.multi_add_handle = try library.address("curl_multi_add_handle")
            table.multi_remove_handle = try library.address("curl_multi_remove_handle")
            table.multi_perform = try library.address("curl_multi_perform")
            table.multi_poll = try library.address("curl_multi_poll")
            table.multi_info_read = try library.address("curl_multi_info_read")
            table.multi_strerror = try library.address("curl_multi_strerror")
        } catch {
            return .failure(CurlError(setup: error.description))
        }
        let api = UnsafeMutablePointer<CCurl_api>.allocate(capacity: 1)
        api.initialize(to: table)
        let code = CCurl_global_init(api, Int(CURL_GLOBAL_DEFAULT))
        guard code == CURLE_OK else {
            let message = String(cString: CCurl_easy_strerror(api, code))
            return .failure(CurlError(setup: "libcurl could not be initialised (\(message))"))
        }
        // `api` stays allocated for the life of the process, as the library stays loaded.
        return .success(CurlLibrary(api: api))
    }
}
