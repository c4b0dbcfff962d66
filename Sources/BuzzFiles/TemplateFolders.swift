import BirthdayBuzz
import Foundation

/// Reads the user's template folders (`DIR/<locale>/<kind>.mustache`) for the
/// core, which checks and compiles what it is handed (`MessageTemplates`) but
/// reads nothing itself. What only the file system can say is said here: the
/// folder is a file, a template sits outside a locale folder, a file cannot be
/// read or is not UTF-8. A missing folder is fine (no overrides).
public enum TemplateFolders {
    /// The largest template file read: the body of a mail, with room to spare.
    public static let maxFileBytes = 1 << 20

    /// Each folder's overrides, in the order given (an earlier folder wins).
    public static func read(_ directories: [String]) throws(TemplateError) -> [[TemplateOverride]] {
        var result: [[TemplateOverride]] = []
        for directory in directories where !directory.isEmpty {
            result.append(try read(directory))
        }
        return result
    }

    /// One folder's overrides, its entries in name order (hidden ones skipped).
    public static func read(_ directory: String) throws(TemplateError) -> [TemplateOverride] {
        var info = stat()
        guard stat(directory, &info) == 0 else { return [] }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw TemplateError(file: directory, line: 0, column: 0, message: "not a folder")
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var files: [TemplateOverride] = []
        for entry in try listing(directory) where !entry.hasPrefix(".") {
            let folder = base + entry
            guard stat(folder, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                if entry.hasSuffix(".mustache") {
                    throw TemplateError(file: folder, line: 0, column: 0,
                                        message: "templates go in a locale folder, e.g. \(base)en/\(entry)")
                }
                continue
            }
            for name in try listing(folder) where name.hasSuffix(".mustache") && !name.hasPrefix(".") {
                let path = folder + "/" + name
                let text: String
                do {
                    text = try TextFile.read(path, limit: maxFileBytes)
                } catch {
                    throw TemplateError(file: path, line: error.line ?? 0, column: 0,
                                        message: error.line == nil ? "cannot read the file (\(error.reason))" : "the file \(error.reason)")
                }
                files.append(TemplateOverride(directory: directory, localeFolder: entry, fileName: name, text: text))
            }
        }
        return files
    }

    private static func listing(_ directory: String) throws(TemplateError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw TemplateError(file: directory, line: 0, column: 0, message: "cannot list the folder")
        }
    }
}

extension MessageTemplates {
    /// The shipped templates overridden from `overrideDirectories` (read here,
    /// checked and compiled by the core); an earlier folder wins.
    public init(overrideDirectories: [String], shipped: [String: String] = ShippedTemplates.all) throws(TemplateError) {
        try self.init(overrides: TemplateFolders.read(overrideDirectories), shipped: shipped)
    }

    /// One override folder, or none.
    public init(overrideDirectory: String?, shipped: [String: String] = ShippedTemplates.all) throws(TemplateError) {
        try self.init(overrideDirectories: overrideDirectory.map { [$0] } ?? [], shipped: shipped)
    }
}
