import Foundation
import XCTest

/// Starts a real Apache for a test, or skips the test when apache2 is missing — except under
/// `CI=true`, where a missing server is a failure.
public enum ServerRequirement {
    public static func apache(auth: ApacheServer.Auth = .none, file: StaticString = #filePath, line: UInt = #line) throws -> ApacheServer {
        guard ApacheServer.isAvailable else {
            if TestEnvironment.isCI {
                XCTFail("apache2 is not installed (/usr/sbin/apache2) and CI=true", file: file, line: line)
                throw ShellError("apache2 missing under CI")
            }
            throw XCTSkip("apache2 is not installed (/usr/sbin/apache2)")
        }
        return try ApacheServer(auth: auth)
    }
}
