#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A C library opened with `dlopen` when first needed instead of being linked
/// (libcurl in `CurlLibrary`, libdbus in BuzzChannels' `LibDBus`): commands that
/// never use it do not map it and its dependencies at start-up. It stays loaded
/// for the life of the process.
///
/// `@unchecked Sendable`: the handle is only read (by `dlsym`, which is thread-safe).
public struct SharedLibrary: @unchecked Sendable {
    /// Why a library could not be used, in one line that names the fix.
    public struct LoadError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    private let handle: UnsafeMutableRawPointer
    private let soname: String
    private let name: String

    /// Opens `soname` (lazily bound, its symbols kept local). `name` is how a
    /// user knows the library; `package` is the Debian package that installs it.
    public init(soname: String, name: String, package: String) throws(LoadError) {
        guard let handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? soname + ": cannot be loaded"
            if let exhausted = SystemError.descriptorsExhausted() {  // installed, but no descriptor to open it with
                throw LoadError(description: "\(name) could not be loaded: \(exhausted)")
            }
            throw LoadError(description: "\(name) is not available (\(reason)); install it with: apt-get install \(package)")
        }
        self.handle = handle
        self.soname = soname
        self.name = name
    }

    /// The C function `symbol` as the function type `F` (its exact prototype).
    public func function<F>(_ symbol: String, as type: F.Type = F.self) throws(LoadError) -> F {
        unsafeBitCast(try address(symbol), to: F.self)
    }

    /// The address of `symbol`.
    public func address(_ symbol: String) throws(LoadError) -> UnsafeMutableRawPointer {
        guard let pointer = dlsym(handle, symbol) else {
            throw LoadError(description: "\(soname) lacks \(symbol); it is too old or not \(name)")
        }
        return pointer
    }
}
