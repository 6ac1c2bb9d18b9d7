import Foundation
import XCTest
import Curl
import FavFSCore
import Providers
import TestSupport

/// WebDAV listings are parsed while they arrive (`SpoolFollower`). Against a real HTTP server
/// (`Tests/Fixtures/hostile_dav.py`): a listing sent in pieces with pauses is read whole; one
/// with bytes that are not UTF-8 past the first pieces, or cut off halfway, is a clear error —
/// never a partial listing, never a hang.
final class WebDAVStreamedListingTests: XCTestCase {
    private var server: BackgroundProcess?
    private var provider: WebDAVProvider!

    override func setUpWithError() throws {
        let hostile = try HostileDAVServer()
        server = hostile.process
        let port = hostile.port
        provider = WebDAVProvider(configuration: .init(baseURL: "http://127.0.0.1:\(port)/", remoteDescription: "dav://127.0.0.1:\(port)/",
                                                       credentials: nil),
                                  transport: CurlTransport())
    }

    override func tearDown() {
        provider = nil
        server?.stop()
        super.tearDown()
    }

    func testAListingThatArrivesInPiecesIsReadWhole() async throws {
        let started = Date()
        let items = try await provider.enumerateAll(in: ItemIdentifier("/slow"))
        XCTAssertEqual(items.count, 2_000)
        XCTAssertEqual(Set(items.map(\.name)).count, 2_000)
        let last = try XCTUnwrap(items.first { $0.name == "file-01999.txt" })
        XCTAssertEqual(last.size, 1_999)
        // Five pieces 150 ms apart: the listing waited for all of them.
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 0.5)
    }

    func testBytesThatAreNotUTF8MidwayAreAClearError() async throws {
        do {
            let items = try await provider.enumerateAll(in: ItemIdentifier("/badutf8"))
            XCTFail("a listing with bytes that are not UTF-8 gave \(items.count) items")
        } catch let e as ProviderError {
            XCTAssertEqual(e.kind, .invalidResponse, "\(e)")
            XCTAssertTrue(e.description.contains("not valid UTF-8"), "\(e)")
            XCTAssertTrue(e.description.contains("/badutf8"), "the error names the folder: \(e)")
        }
    }

    func testAListingCutOffHalfwayIsAnErrorNotAHang() async throws {
        let started = Date()
        do {
            let items = try await provider.enumerateAll(in: ItemIdentifier("/cut"))
            XCTFail("a listing cut off halfway gave \(items.count) items")
        } catch let e as ProviderError {
            XCTAssertTrue(e.isTransient || e.kind == .invalidResponse, "\(e)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "a cut-off listing must fail promptly")
    }

    /// A single item is asked for with `Depth: 0` and its short answer kept in memory (at most
    /// `maxSingleItemAnswer` bytes); a server that answers with a whole listing instead is asked
    /// again the spooled way, and the item is found in it.
    func testADepthZeroAnswerLongerThanOneItemIsReadSpooled() async throws {
        let folder = try await provider.item(for: ItemIdentifier("/nodepth"))
        XCTAssertEqual(folder.kind, .folder)
        XCTAssertEqual(folder.identifier, ItemIdentifier("/nodepth"))
        let root = try await provider.item(for: .rootContainer)
        XCTAssertEqual(root.kind, .folder)
    }

    /// A time set on a file whose version moves at every answer (another client rewriting it;
    /// on Apache, a folder files are being uploaded into) is not kept, and says why; it says
    /// nothing about the server: the next time set is tried again, not refused as "this server
    /// keeps no times" (which once made a whole `tar x` lose its times at the next mount).
    func testATimeOnAnItemThatKeepsChangingIsNotTakenForAServerThatKeepsNoTimes() async throws {
        let id = ItemIdentifier("/moving.txt")
        let when = Timestamp(seconds: 1_500_000_000, nanoseconds: 0)
        for _ in 0..<2 {
            do {
                let item = try await provider.setModified(id, to: when)
                XCTFail("a time on a file that kept changing came back as kept: \(item)")
            } catch let e as ProviderError {
                XCTAssertEqual(e.kind, .versionChanged, "\(e)")
                XCTAssertTrue(e.detail.contains("kept changing"), "\(e)")
            }
        }
    }
}
