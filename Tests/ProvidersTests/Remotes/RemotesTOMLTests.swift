import Foundation
@testable import Providers
import XCTest

/// The remotes file's TOML subset: reading, writing, round trips and errors with their line.
final class RemotesTOMLTests: XCTestCase {
    func parse(_ text: String) throws -> [StoredRemote] { try RemotesTOML.parse(text) }

    func parseError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> RemotesTOML.ParseError? {
        do {
            _ = try RemotesTOML.parse(text)
            XCTFail("parsed without an error:\n\(text)", file: file, line: line)
            return nil
        } catch { return error }
    }

    func testReadsTablesCommentsAndBlankLines() throws {
        let text = """
            # a comment

            [remotes.nas]   # trailing comment
            url = "dav://me@nas.local:8080/files/"
              default = true
            secret="pw"

            [remotes.nas.options]
            region = "eu-west-1"   # why
            "odd key" = 'C:\\literal "x"'

            [remotes."home.lab"]
            url = 'file:///srv/data'
            default = false
            """
        let r = try parse(text)
        XCTAssertEqual(r.count, 2)
        XCTAssertEqual(r[0], StoredRemote(name: "nas", url: "dav://me@nas.local:8080/files/", isDefault: true, secret: "pw",
                                          options: ["region": "eu-west-1", "odd key": "C:\\literal \"x\""]))
        XCTAssertEqual(r[1], StoredRemote(name: "home.lab", url: "file:///srv/data"))
    }

    func testEscapesInBasicStrings() throws {
        let r = try parse(#"""
            [remotes.a]
            url = "file:///x"
            secret = "q\"b\\n\nt\tu\u00e9U\U0001F600cr\r"
            """#)
        XCTAssertEqual(r[0].secret, "q\"b\\n\nt\tuéU😀cr\r")
    }

    func testOptionsTableBeforeItsRemote() throws {
        let r = try parse("""
            [remotes.a.options]
            k = "v"
            [remotes.a]
            url = "file:///x"
            """)
        XCTAssertEqual(r, [StoredRemote(name: "a", url: "file:///x", options: ["k": "v"])])
    }

    func testRoundTripOfAwkwardValues() throws {
        let awkward = ["quote \" inside", "back\\slash\\", "ünïcödé ☃ 😀", "a=b=c", "#not a comment", "tab\there",
                       "new\nline", "cr\r", "bell\u{07}del\u{7f}", "'single'", "   spaces   ", "", "\\u0041 literal",
                       "]bracket[", "x # y = z"]
        var remotes: [StoredRemote] = []
        for (i, v) in awkward.enumerated() {
            remotes.append(StoredRemote(name: "r\(i)", url: "dav://u@h/\(i)", isDefault: i == 3, secret: v,
                                        options: [v.isEmpty ? "empty" : v: v, "plain_key-1": v]))
        }
        remotes.append(StoredRemote(name: "dots.and-dashes_1", url: "s3://b/p?region=x&a=b"))
        let text = RemotesTOML.serialize(remotes)
        XCTAssertEqual(try parse(text), remotes, "round trip of:\n\(text)")
        // Written control characters are escaped: every record stays on one line.
        XCTAssertFalse(text.contains("\u{07}"))
        XCTAssertTrue(text.contains(#"[remotes."dots.and-dashes_1"]"#), text)
    }

    func testWriterLayout() {
        let text = RemotesTOML.serialize([StoredRemote(name: "nas", url: "dav://me@h/", isDefault: true, secret: "s",
                                                       options: ["b": "2", "a": "1"])])
        XCTAssertTrue(text.hasSuffix("""

            [remotes.nas]
            url = "dav://me@h/"
            default = true
            secret = "s"

            [remotes.nas.options]
            a = "1"
            b = "2"

            """), text)
    }

    func testEmptyFile() throws {
        XCTAssertEqual(try parse(""), [])
        XCTAssertEqual(try parse("# only a comment\n\n"), [])
        XCTAssertEqual(try parse("[remotes]\n"), [])
    }

    func testCRLFLines() throws {
        XCTAssertEqual(try parse("[remotes.a]\r\nurl = \"file:///x\"\r\n"), [StoredRemote(name: "a", url: "file:///x")])
    }

    func testErrorsNameTheLine() {
        let cases: [(String, Int, String)] = [
            ("[remotes.a]\nurl = \"file:///x\n", 2, "not closed"),
            ("[remotes.a]\nurl = \"file:///x\"\nsecret = \"bad \\q\"\n", 3, "unknown escape"),
            ("[remotes.a]\nurl = \"x\" trailing\n", 2, "unexpected"),
            ("\n\n[other]\n", 3, "unknown table"),
            ("url = \"x\"\n", 1, "outside"),
            ("[remotes.a]\nurl \"x\"\n", 2, "expected '='"),
            ("[remotes.a]\nurl = 42\n", 2, "unsupported value"),
            ("[remotes.a]\nurl = \"x\"\nurl = \"y\"\n", 3, "twice"),
            ("[remotes.a]\nurl = \"x\"\n[remotes.a]\n", 3, "twice"),
            ("[remotes.a]\nurl = \"x\"\ncolour = \"red\"\n", 3, "unknown key"),
            ("[remotes.a]\nurl = \"x\"\ndefault = \"yes\"\n", 3, "true or false"),
            ("[remotes.a.options]\nport = 8080\n", 2, "unsupported value"),
            ("[remotes.a.options]\nport = true\n", 2, "must be a string"),
            ("\n[remotes.a]\ndefault = true\n", 2, "has no url"),
            ("[remotes.a]\nurl = \"x\"\ndefault = true\n[remotes.b]\nurl = \"y\"\ndefault = true\n", 6, "both marked default"),
            ("[remotes.\"a b\"]\nurl = \"x\"\n", 1, "not a valid remote name"),
            ("[remotes.a]\nurl = \"\"\"x\"\"\"\n", 2, "multi-line"),
            ("[remotes.a]\nurl = \"x\\u12\"\n", 2, "hex digits"),
            ("[remotes.a]\nurl = \"x\\uD800\"\n", 2, "not a Unicode scalar"),
            ("[remotes.a]\nurl = \"x\u{01}\"\n", 2, "control character"),
            ("[[remotes]]\n", 1, "arrays of tables"),
            ("[remotes.a\n", 1, "expected ']'"),
            ("[remotes.a]\noptions.region = \"x\"\n", 2, "dotted keys"),
        ]
        for (text, line, words) in cases {
            guard let e = parseError(text) else { continue }
            XCTAssertEqual(e.line, line, "line of the error for \(text.debugDescription): \(e)")
            XCTAssertTrue(e.problem.contains(words), "\(text.debugDescription): '\(e.problem)' should say '\(words)'")
        }
    }
}
