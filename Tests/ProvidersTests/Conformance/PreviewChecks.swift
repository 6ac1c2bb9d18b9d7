import FavFSCore
import Foundation
import TestSupport
import XCTest

/// What a cloud provider's previews must do, whatever the service: a JPEG within 128 × 128
/// of an image, made without downloading it; `.notSupported` for a file the service makes no
/// preview of; `.isAFolder` for a folder.
enum PreviewChecks {
    /// Puts `pics/a.jpg` (640 × 480) and `pics/notes.txt` in `served`, then checks `p`'s previews
    /// of them and of `pics`. `downloads` counts the service's content requests so far.
    static func check(_ p: any ThumbnailProvider, served: URL, downloads: () -> Int,
                      file: StaticString = #filePath, line: UInt = #line) async throws {
        guard let python = TestPython.path else { throw XCTSkip("python3 missing") }
        try FileManager.default.createDirectory(at: served.appendingPathComponent("pics"), withIntermediateDirectories: true)
        let make = try Shell.run(python, ["-c", "import sys; from PIL import Image; Image.new('RGB', (640, 480), (40, 120, 200)).save(sys.argv[1], 'JPEG')",
                                          served.appendingPathComponent("pics/a.jpg").path])
        XCTAssertEqual(make.status, 0, make.error, file: file, line: line)
        try Data("text\n".utf8).write(to: served.appendingPathComponent("pics/notes.txt"))
        XCTAssertTrue(p.capabilities.contains(.thumbnails), file: file, line: line)

        let preview = try await p.thumbnail(for: try await p.item(for: ItemIdentifier("/pics/a.jpg")))
        XCTAssertEqual(Array(preview.prefix(2)), [0xFF, 0xD8], "not a JPEG", file: file, line: line)
        let saved = NSTemporaryDirectory() + "favfs-preview-\(UUID().uuidString).jpg"
        try preview.write(to: URL(fileURLWithPath: saved))
        defer { unlink(saved) }
        let size = try Shell.run(python, ["-c", "import sys; from PIL import Image; print(Image.open(sys.argv[1]).size)", saved])
        XCTAssertEqual(size.output.trimmingCharacters(in: .whitespacesAndNewlines), "(128, 96)", file: file, line: line)
        XCTAssertEqual(downloads(), 0, "the image was downloaded", file: file, line: line)

        for (path, kind) in [("/pics/notes.txt", ProviderError.Kind.notSupported), ("/pics", .isAFolder)] {
            let item = try await p.item(for: ItemIdentifier(path))
            do {
                _ = try await p.thumbnail(for: item)
                XCTFail("a preview of \(path)", file: file, line: line)
            } catch let e as ProviderError {
                XCTAssertEqual(e.kind, kind, "\(path): \(e)", file: file, line: line)
            }
        }
    }
}
