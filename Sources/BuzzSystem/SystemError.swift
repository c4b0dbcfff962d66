#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system call failed: which one, and the `errno` it left.
///
/// `description` reads as the C library would print it (`pipe: Too many open
/// files`); `reason` is the sentence alone, for messages that name the file
/// instead of the call.
///
/// ```swift
/// guard pipe(&ends) == 0 else { throw SystemError("pipe") }
/// ```
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function that failed.
    public var function: String
    /// The `errno` it set.
    public var code: Int32

    /// The failure of `function`, with `errno` as it is now unless `code` is given.
    public init(_ function: String, errno code: Int32 = errno) {
        self.function = function
        self.code = code
    }

    /// `strerror`'s sentence for the code, such as "No such file or directory".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "\(function): \(reason)" }

    /// The process has no file descriptor left (EMFILE): libcurl calls that
    /// "Couldn't connect to server", and `dlopen` cannot open a library. Told by
    /// trying to open one more; nil when one is free.
    public static func descriptorsExhausted() -> String? {
        let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if probe >= 0 {
            close(probe)
            return nil
        }
        guard errno == EMFILE else { return nil }
        var limit = rlimit()
        let known = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
        return "too many open files (" + (known ? "the limit is \(limit.rlim_cur); " : "") + "raise it with ulimit -n or LimitNOFILE=)"
    }
}
