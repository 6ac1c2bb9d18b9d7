import Foundation
import XCTest
import Curl
@testable import FavFSCore
@testable import Providers
import TestSupport

/// A new object uploaded while its file is written: multipart parts sent as they fill, against
/// moto (signatures enforced).
final class S3StreamingUploadTests: XCTestCase {
    private var path = ""
    private var fd: Int32 = -1

    override func setUpWithError() throws {
        path = NSTemporaryDirectory() + "favfs-s3stream-\(UUID().uuidString)"
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
    }

    override func tearDown() {
        close(fd)
        unlink(path)
    }

    private func append(_ data: Data, at offset: Int) {
        XCTAssertEqual(data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }, data.count)
    }

    private static func random(_ count: Int) -> Data {
        Data((0..<count).map { _ in UInt8.random(in: 0...255) })
    }

    func testPartsGoAsTheFileFillsAndTheObjectAppearsAtTheEnd() async throws {
        let f = try S3Fixture("stream")
        let p = try f.provider(["multipart_threshold": "5M", "part_size": "5M"])
        XCTAssertEqual(p.streamingThreshold, 5 << 20)
        let data = Self.random((12 << 20) + 12_345)
        let steps = stride(from: 0, to: data.count, by: 3 << 20).map { $0..<min(data.count, $0 + (3 << 20)) }
        append(data[steps[0]], at: 0)
        let content = GrowingContent(length: Int64(steps[0].count))
        let upload = Task { [fd] in try await p.uploadStreaming(ItemIdentifier("/grown.bin"), fd: fd, content: content) }
        for step in steps.dropFirst() {
            try await Task.sleep(nanoseconds: 100_000_000)
            append(data[step], at: step.lowerBound)
            content.extend(to: Int64(step.upperBound))
        }
        XCTAssertFalse(try f.server.exists(f.key("grown.bin")), "the object appears only when it is complete")
        XCTAssertTrue(content.finish(length: Int64(data.count)))
        let item = try await upload.value
        XCTAssertEqual(item.size, Int64(data.count))
        XCTAssertTrue(item.version?.hasSuffix("-3\"") ?? false, "three parts: \(item.version ?? "nil")")
        XCTAssertEqual(try f.server.get(f.key("grown.bin")).map(sha256), sha256(data))
    }

    func testAnAbandonedStreamLeavesNoObject() async throws {
        let f = try S3Fixture("streamgone")
        let p = try f.provider(["multipart_threshold": "5M", "part_size": "5M"])
        let data = Self.random(6 << 20)
        append(data, at: 0)
        let content = GrowingContent(length: Int64(data.count))
        let upload = Task { [fd] in try await p.uploadStreaming(ItemIdentifier("/gone.bin"), fd: fd, content: content) }
        try await Task.sleep(nanoseconds: 300_000_000)
        content.abandon("a write went back over what was appended")
        await s3AssertError(.cancelled) { try await upload.value }
        XCTAssertFalse(try f.server.exists(f.key("gone.bin")))
    }

    func testAKeyTakenMeanwhileIsExistsAndKeepsItsContent() async throws {
        let f = try S3Fixture("streamtaken")
        try f.seed(["taken.bin": "theirs"])
        let p = try f.provider(["multipart_threshold": "5M", "part_size": "5M"])
        let data = Self.random(6 << 20)
        append(data, at: 0)
        let content = GrowingContent(length: Int64(data.count))
        content.finish(length: Int64(data.count))
        await s3AssertError(.exists) { try await p.uploadStreaming(ItemIdentifier("/taken.bin"), fd: self.fd, content: content) }
        XCTAssertEqual(try f.server.get(f.key("taken.bin")).map { String(decoding: $0, as: UTF8.self) }, "theirs")
    }
}
