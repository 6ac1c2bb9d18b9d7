import Foundation
import TestSupport
import XCTest

/// S3: a big new file written into the mount is uploaded as a multipart upload whose parts go
/// while the program writes (release binary against moto). A write behind what was sent falls
/// back to the whole file; either way the bucket ends with exactly what was written.
final class StreamingUploadS3EndToEndTests: XCTestCase {
    private func mounted(_ moto: MotoServer, bucket: String) throws -> MountedFavFS {
        let remote = ConformanceRemote(url: "s3://\(bucket)/",
                                       options: ["endpoint": moto.endpoint, "access_key_id": moto.accessKeyId, "region": moto.region,
                                                 "multipart_threshold": "5M", "part_size": "5M"],
                                       secret: moto.secretAccessKey)
        let m = try MountedFavFS(remote: remote.urlWithOptions)
        try m.mountOrThrow(password: remote.secret)
        return m
    }

    func testPartsGoWhileTheFileIsWritten() throws {
        try E2EGate.require(apache: false)
        let moto = try ServerRequirement.moto(bucket: "favfs-stream")
        try moto.start()
        defer { moto.stop() }
        let m = try mounted(moto, bucket: "favfs-stream")
        defer { m.tearDown() }
        let first = StreamingUploadEndToEndTests.pattern(11 << 20), second = StreamingUploadEndToEndTests.pattern(6 << 20, seed: 4)
        let fd = open(m.path + "/big.bin", O_CREAT | O_WRONLY | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        StreamingUploadEndToEndTests.write(fd, first, at: 0)
        // moto logs each request line: the first parts are PUT while the file is still open.
        let parts = { moto.log().split(separator: "\n").filter { $0.contains("PUT /favfs-stream/big.bin?") && $0.contains("partNumber=") }.count }
        XCTAssertTrue(waitUntil(30) { parts() >= 2 }, "no part was sent while the file was written:\n\(moto.log().suffix(2000))")
        XCTAssertNil(try moto.get("big.bin"), "the object must appear only whole")
        StreamingUploadEndToEndTests.write(fd, second, at: first.count)
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try moto.get("big.bin"), Data(first + second))
        XCTAssertEqual(parts(), 4, "17 MiB in 5 MiB parts, each sent once")
    }

    func testAWriteBehindWhatWasSentUploadsTheWholeFile() throws {
        try E2EGate.require(apache: false)
        let moto = try ServerRequirement.moto(bucket: "favfs-stream2")
        try moto.start()
        defer { moto.stop() }
        let m = try mounted(moto, bucket: "favfs-stream2")
        defer { m.tearDown() }
        var model = StreamingUploadEndToEndTests.pattern(12 << 20, seed: 2)
        let fd = open(m.path + "/edited.bin", O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        StreamingUploadEndToEndTests.write(fd, model, at: 0)
        XCTAssertTrue(waitUntil(30) { moto.log().contains("PUT /favfs-stream2/edited.bin?") }, "the stream did not start")
        let patch = [UInt8](repeating: 0x42, count: 10_000)
        StreamingUploadEndToEndTests.write(fd, patch, at: 1_000)
        model.replaceSubrange(1_000..<11_000, with: patch)
        XCTAssertEqual(close(fd), 0)
        XCTAssertTrue(try m.unmount().succeeded)
        XCTAssertEqual(try moto.get("edited.bin"), Data(model))
    }
}
