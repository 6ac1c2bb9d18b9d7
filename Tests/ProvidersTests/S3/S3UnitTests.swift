import Foundation
import XCTest
@testable import Providers
import FavFSCore

/// The S3 provider's pure parts: XML parsing, key encoding, URLs, options, credentials.
final class S3UnitTests: XCTestCase {
    // MARK: XML

    func testListPageWithContentsPrefixesAndToken() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>bucket</Name><Prefix>photos/</Prefix><KeyCount>3</KeyCount><MaxKeys>2</MaxKeys>
          <Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>
          <Contents><Key>photos/</Key><LastModified>2024-05-01T10:20:30.000Z</LastModified>
            <ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass></Contents>
          <Contents><Key>photos/a&amp;b.jpg</Key><LastModified>2024-05-01T10:20:30.999Z</LastModified>
            <ETag>"abc-2"</ETag><Size>12345</Size></Contents>
          <CommonPrefixes><Prefix>photos/2024/</Prefix></CommonPrefixes>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
        </ListBucketResult>
        """
        let page = try S3XML.parseList(Data(xml.utf8))
        XCTAssertEqual(page.objects.map(\.key), ["photos/", "photos/a&b.jpg"])
        XCTAssertEqual(page.objects[1].size, 12345)
        XCTAssertEqual(page.objects[1].etag, "\"abc-2\"")
        XCTAssertEqual(page.objects[0].etag, "\"d41d8cd98f00b204e9800998ecf8427e\"")
        // Floored to the second, so a listing and a HEAD agree.
        XCTAssertEqual(page.objects[1].lastModified, 1_714_558_830)
        XCTAssertEqual(page.commonPrefixes, ["photos/2024/"])
        XCTAssertTrue(page.isTruncated)
        XCTAssertEqual(page.nextContinuationToken, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        XCTAssertEqual(page.keyCount, 3)
    }

    func testURLEncodedListingIsDecodedWhereverEncodingTypeStands() throws {
        // moto puts EncodingType after the keys, S3 before; S3 writes a space as '+'.
        let xml = """
        <ListBucketResult><IsTruncated>false</IsTruncated>
          <Contents><Key>d/a+b%2Bc%09t%C3%BC</Key><Size>1</Size></Contents>
          <Contents><Key>d/x%20y</Key><Size>2</Size></Contents>
          <CommonPrefixes><Prefix>d/%E2%98%83/</Prefix></CommonPrefixes>
          <EncodingType>url</EncodingType></ListBucketResult>
        """
        let page = try S3XML.parseList(Data(xml.utf8))
        XCTAssertEqual(page.objects.map(\.key), ["d/a b+c\ttü", "d/x y"])
        XCTAssertEqual(page.commonPrefixes, ["d/☃/"])
        XCTAssertFalse(page.isTruncated)
        XCTAssertNil(page.nextContinuationToken)
    }

    func testNotAListingIsAnError() {
        XCTAssertThrowsError(try S3XML.parseList(Data("<Error><Code>NoSuchBucket</Code></Error>".utf8)))
        XCTAssertThrowsError(try S3XML.parseList(Data("not xml".utf8)))
    }

    func testErrorBodies() {
        let body = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message>
        <RequestId>1</RequestId></Error>
        """.utf8)
        XCTAssertEqual(S3XML.parseError(body)?.code, "SignatureDoesNotMatch")
        XCTAssertNil(S3XML.parseError(Data("<CopyObjectResult><ETag>x</ETag></CopyObjectResult>".utf8)))
        XCTAssertNil(S3XML.parseError(Data()))

        let errors = S3Errors(remote: "s3://b/")
        let denied = errors.status(403, method: "GET", path: "/x", body: body)
        XCTAssertEqual(denied.kind, .denied)
        XCTAssertTrue(denied.detail.contains("SignatureDoesNotMatch"), denied.detail)
        XCTAssertTrue(denied.detail.contains("secret access key"), denied.detail)
        let key = Data("<Error><Code>InvalidAccessKeyId</Code><Message>m</Message></Error>".utf8)
        XCTAssertTrue(errors.status(403, method: "GET", path: "/x", body: key).detail.contains("access key ID"))
        XCTAssertEqual(errors.status(404, method: "GET", path: "/x",
                                     body: Data("<Error><Code>NoSuchBucket</Code></Error>".utf8)).kind, .notFound)
        XCTAssertEqual(errors.status(412, method: "PUT", path: "/x",
                                     body: Data("<Error><Code>PreconditionFailed</Code></Error>".utf8)).kind, .versionChanged)
        XCTAssertEqual(errors.status(412, method: "PUT", path: "/x", body: Data("<Error><Code>PreconditionFailed</Code></Error>".utf8),
                                     meaning: ["PreconditionFailed": .exists]).kind, .exists)
        XCTAssertEqual(errors.status(503, method: "GET", path: "/x").kind, .serverError)
        XCTAssertEqual(errors.status(404, method: "HEAD", path: "/x").kind, .notFound)
    }

    func testFlatResults() {
        let initiate = Data("""
        <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
        <Bucket>b</Bucket><Key>k</Key><UploadId>VXBsb2FkIElE</UploadId></InitiateMultipartUploadResult>
        """.utf8)
        XCTAssertEqual(S3XML.parseFlat(initiate)?.fields["UploadId"], "VXBsb2FkIElE")
        XCTAssertEqual(S3XML.parseFlat(initiate)?.root, "InitiateMultipartUploadResult")
    }

    func testTimes() {
        XCTAssertEqual(S3Time.parseISO8601("1970-01-01T00:00:00.000Z"), 0)
        XCTAssertEqual(S3Time.parseISO8601("2024-02-29T23:59:59Z"), 1_709_251_199)
        XCTAssertNil(S3Time.parseISO8601("2024-02-29 23:59:59"))
        XCTAssertEqual(S3Time.parseHTTP("Wed, 01 May 2024 10:20:30 GMT"), 1_714_558_830)
    }

    // MARK: encoding and URLs

    func testSigV4EncodingOfAwkwardKeys() {
        XCTAssertEqual(S3Addressing.encode("a b/ü+&?#%:;'~-_.", keepSlash: true), "a%20b/%C3%BC%2B%26%3F%23%25%3A%3B%27~-_.")
        XCTAssertEqual(S3Addressing.encode("a/b"), "a%2Fb")
        XCTAssertEqual(S3Addressing.encode("tab\there☃"), "tab%09here%E2%98%83")
        for name in ["a b", "ünïcödé ☃", "#hash", "100%", "what?", "a+b", "it's", "a&b", "semi;colon", "co:lon", "tab\there", "trailing dots..."] {
            let encoded = S3Addressing.encode(name)
            XCTAssertTrue(encoded.utf8.allSatisfy { $0 < 0x80 && ($0 == UInt8(ascii: "%") || !"/?#&=+ ".utf8.contains($0)) }, encoded)
            XCTAssertEqual(encoded.removingPercentEncoding, name)
        }
    }

    func testQueryIsCanonical() {
        // Sorted by name, values encoded, '=' also for an empty value.
        XCTAssertEqual(S3Addressing.queryString([("uploads", "")]), "?uploads=")
        XCTAssertEqual(S3Addressing.queryString([("prefix", "a b/"), ("list-type", "2"), ("delimiter", "/"), ("continuation-token", "x+y=")]),
                       "?continuation-token=x%2By%3D&delimiter=%2F&list-type=2&prefix=a%20b%2F")
        XCTAssertEqual(S3Addressing.queryString([]), "")
    }

    func testPathStyleAndVirtualHostedURLs() {
        let path = S3Addressing(scheme: "http", host: "127.0.0.1", port: 9000, bucket: "bkt", pathStyle: true, rootPath: "/p/q")
        XCTAssertEqual(path.rootPrefix, "p/q/")
        XCTAssertEqual(path.fileKey(ItemIdentifier("/a b/c")), "p/q/a b/c")
        XCTAssertEqual(path.folderPrefix(ItemIdentifier("/a b")), "p/q/a b/")
        XCTAssertEqual(path.folderPrefix(.rootContainer), "p/q/")
        XCTAssertEqual(path.objectURL("p/q/a b/c"), "http://127.0.0.1:9000/bkt/p/q/a%20b/c")
        XCTAssertEqual(path.bucketURL(query: [("list-type", "2")]), "http://127.0.0.1:9000/bkt?list-type=2")
        XCTAssertEqual(path.copySource("p/a+b"), "/bkt/p/a%2Bb")

        let virtual = S3Addressing(scheme: "https", host: "s3.eu-west-1.amazonaws.com", port: nil, bucket: "bkt", pathStyle: false, rootPath: "/")
        XCTAssertEqual(virtual.rootPrefix, "")
        XCTAssertEqual(virtual.objectURL("k"), "https://bkt.s3.eu-west-1.amazonaws.com/k")
        XCTAssertEqual(virtual.bucketURL(query: [("list-type", "2")]), "https://bkt.s3.eu-west-1.amazonaws.com/?list-type=2")
        XCTAssertEqual(S3Addressing.childName(of: "p/q/dir/", in: "p/q/"), "dir")
        XCTAssertNil(S3Addressing.childName(of: "other/x", in: "p/q/"))
    }

    func testMultipartParts() {
        let parts = S3Provider.parts(length: 12 << 20, partSize: 5 << 20)
        XCTAssertEqual(parts.map(\.number), [1, 2, 3])
        XCTAssertEqual(parts.map(\.offset), [0, 5 << 20, 10 << 20])
        XCTAssertEqual(parts.map(\.length), [5 << 20, 5 << 20, 2 << 20])
        XCTAssertEqual(S3Provider.parts(length: 10 << 20, partSize: 5 << 20).count, 2)
    }

    // MARK: configuration

    private func configuration(_ url: String, _ options: [String: String] = [:], secret: String? = nil,
                               env: [String: String] = [:], home: String = "/nonexistent") throws -> S3Provider.Configuration {
        try S3Provider.configuration(from: RemoteConfiguration(url: try RemoteURL(url), options: options, secret: secret),
                                     environment: env, home: home)
    }

    func testDefaultsAndOptions() throws {
        let aws = try configuration("s3://bkt/photos")
        XCTAssertEqual(aws.addressing.objectURL("photos/x"), "https://bkt.s3.us-east-1.amazonaws.com/photos/x")
        XCTAssertEqual(aws.maxKeys, 1000)
        XCTAssertEqual(aws.multipartThreshold, 64 << 20)
        XCTAssertEqual(aws.partSize, 16 << 20)
        XCTAssertNil(aws.credentials)

        let local = try configuration("s3://bkt?endpoint=http://127.0.0.1:9000&region=eu-west-1&max_keys=100&multipart_threshold=5M&part_size=5MiB")
        XCTAssertEqual(local.addressing.objectURL("x"), "http://127.0.0.1:9000/bkt/x")
        XCTAssertEqual(local.region, "eu-west-1")
        XCTAssertEqual(local.maxKeys, 100)
        XCTAssertEqual(local.multipartThreshold, 5 << 20)
        XCTAssertEqual(local.partSize, 5 << 20)

        let virtual = try configuration("s3://bkt", ["endpoint": "http://minio.test:9000", "path_style": "false"])
        XCTAssertEqual(virtual.addressing.objectURL("x"), "http://bkt.minio.test:9000/x")

        XCTAssertThrowsError(try configuration("s3://bkt", ["max_keys": "5000"]))
        XCTAssertThrowsError(try configuration("s3://bkt", ["part_size": "1M"]))
        XCTAssertThrowsError(try configuration("s3://bkt", ["endpoint": "ftp://x"]))
        XCTAssertThrowsError(try configuration("s3://bkt", ["endpoint": "http://127.0.0.1", "path_style": "false"]))
        XCTAssertThrowsError(try ProviderFactory.make(RemoteConfiguration(url: try RemoteURL("s3://bkt?maxkeys=1")))) { error in
            XCTAssertTrue("\(error)".contains("maxkeys"), "\(error)")
        }
        XCTAssertEqual(SizeOption.parse("1048576"), 1 << 20)
        XCTAssertEqual(SizeOption.parse("2g"), 2 << 30)
        XCTAssertNil(SizeOption.parse("lots"))
    }

    func testCredentialsOrder() throws {
        let home = NSTemporaryDirectory() + "favfs-s3home-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        try """
        # comment
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = defaultsecret
        [work]
        aws_access_key_id=WORKKEY
        aws_secret_access_key=worksecret
        aws_session_token = worktoken
        """.write(toFile: home + "/.aws/credentials", atomically: true, encoding: .utf8)
        let env = ["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_SESSION_TOKEN": "envtoken"]

        // 1. the remote's secret with access_key_id
        let given = try configuration("s3://b", ["access_key_id": "GIVEN"], secret: "givensecret", env: env, home: home).credentials
        XCTAssertEqual(given?.accessKeyId, "GIVEN")
        XCTAssertEqual(given?.secretAccessKey, "givensecret")
        XCTAssertNil(given?.sessionToken)
        XCTAssertThrowsError(try configuration("s3://b", secret: "givensecret", env: env, home: home))
        // 2. the environment
        let fromEnv = try configuration("s3://b", env: env, home: home).credentials
        XCTAssertEqual(fromEnv?.accessKeyId, "ENVKEY")
        XCTAssertEqual(fromEnv?.sessionToken, "envtoken")
        // 3. the profile: option, then AWS_PROFILE, then default
        XCTAssertEqual(try configuration("s3://b", home: home).credentials?.accessKeyId, "DEFAULTKEY")
        XCTAssertEqual(try configuration("s3://b", env: ["AWS_PROFILE": "work"], home: home).credentials?.sessionToken, "worktoken")
        XCTAssertEqual(try configuration("s3://b", ["profile": "work"], home: home).credentials?.accessKeyId, "WORKKEY")
        XCTAssertThrowsError(try configuration("s3://b", ["profile": "nope"], home: home))
        // None at all: anonymous.
        XCTAssertNil(try configuration("s3://b", home: "/nonexistent").credentials)
        // The description never shows the secret.
        XCTAssertFalse("\(given!)".contains("givensecret"))
    }

    func testListingSkipsMarkerAndBadNames() {
        var listed = S3ListPage()
        listed.objects = [S3Object(key: "d/", size: 0), S3Object(key: "d/a", size: 3, lastModified: 5, etag: "\"e\""),
                          S3Object(key: "d/sub", size: 1)]
        listed.commonPrefixes = ["d/sub/", "d//", "d/../"]
        let page = S3Listing.page(from: listed, folder: ItemIdentifier("/d"), prefix: "d/", remote: "s3://b")
        XCTAssertEqual(page.items.map(\.identifier.rawValue), ["/d/sub", "/d/a"])
        XCTAssertEqual(page.items.map(\.kind), [.folder, .file])
        XCTAssertEqual(page.items[1].version, "\"e\"")
        XCTAssertEqual(page.skipped.map(\.problem), [.empty, .dot])
    }
}
