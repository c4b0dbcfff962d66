import BirthdayBuzz
import BuzzTestKit
import BuzzFiles
import Foundation
import Testing

@Suite struct TextFileTests {
    private func temporaryFile(_ bytes: [UInt8]) throws -> String {
        let path = TestFolders.temporary.appendingPathComponent("buzz-text-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func readsUTF8TextAsItIs() throws {
        let path = try temporaryFile(Array("\u{FEFF}Jürgen\r\nline 2\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try TextFile.read(path) == "\u{FEFF}Jürgen\r\nline 2\n")
        #expect(try TextFile.read("/dev/null") == "")
    }

    @Test func namesTheFirstLineThatIsNotUTF8() throws {
        // Line 3 holds Latin-1 "é" (0xE9); line 4 a lone continuation byte.
        let path = try temporaryFile(Array("a\nb\n".utf8) + [0x64, 0xE9, 0x0A, 0x80, 0x0A])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let failure = #expect(throws: TextFile.Failure.self) { try TextFile.read(path) }
        #expect(failure?.line == 3)
        #expect(failure?.reason == "is not UTF-8 text (save it as UTF-8)")
    }

    @Test func saysWhyItCannotRead() throws {
        let missing = #expect(throws: TextFile.Failure.self) { try TextFile.read("/nonexistent/buzz/config.toml") }
        #expect(missing?.line == nil && missing?.reason == "No such file or directory")
        let folder = #expect(throws: TextFile.Failure.self) { try TextFile.read(NSTemporaryDirectory()) }
        #expect(folder?.line == nil && folder?.reason == "is a folder, not a file")
    }

    @Test func stopsAtTheLimit() throws {
        let path = try temporaryFile([UInt8](repeating: 0x61, count: (1 << 20) + 1))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let failure = #expect(throws: TextFile.Failure.self) { try TextFile.read(path, limit: 1 << 20) }
        #expect(failure?.reason == "is larger than 1 MiB")
        #expect(try TextFile.read(path, limit: 2 << 20).utf8.count == (1 << 20) + 1)
        // A device that never ends stops there too.
        #expect(throws: TextFile.Failure.self) { try TextFile.read("/dev/zero", limit: 1 << 20) }
    }
}
