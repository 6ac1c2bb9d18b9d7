import Foundation
import XCTest

/// moto_server (PyPI `moto[server]`, with boto3) on a loopback port, for the S3 provider's
/// tests, with signatures really checked.
///
/// moto checks SigV4 only when told to (`INITIAL_NO_AUTH_ACTION_COUNT`, or `POST
/// /moto-api/reset-auth` with a count): then only keys of IAM users it knows are accepted. So
/// `start()` creates an IAM user with an allow-all policy and an access key, the bucket, and then
/// turns checking on. One more thing: moto 5 verifies signatures against the URL as werkzeug
/// decoded and re-encoded it, not as sent, so keys with characters such as `ü + : ,` fail
/// verification even for boto3's own requests. The launcher (below) makes moto verify against
/// the raw request line — what real S3 does after canonicalizing, and what a canonical SigV4
/// client signs. It changes nothing else in moto.
///
/// The server side (seeding, reading back) goes through boto3 in a small Python helper, never
/// through the provider under test.
public final class MotoServer: @unchecked Sendable {
    public let port: Int
    public let bucket: String
    public let region = "us-east-1"
    public private(set) var accessKeyId = ""
    public private(set) var secretAccessKey = ""
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    private let lock = NSLock()
    private var process: BackgroundProcess?
    private let dir: URL
    private var script: URL { dir.appendingPathComponent("moto_tool.py") }

    /// True when the tests' Python (`TestPython`) can import moto and boto3 (`make setup`).
    public static var isAvailable: Bool { TestPython.canImport(["moto.server", "boto3"]) }

    static var missing: String { "moto is missing in \(TestPython.description); run make setup (moto[server], boto3)" }

    private static func python() throws -> String {
        guard let python = TestPython.path else { throw ShellError(missing) }
        return python
    }

    public init(bucket: String = "favfs-test") throws {
        self.port = try FreePort.next()
        self.bucket = bucket
        dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("favfs-moto-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Self.toolSource.write(to: script, atomically: true, encoding: .utf8)
    }

    deinit { stop(); try? FileManager.default.removeItem(at: dir) }

    /// Starts moto, creates the IAM user, its key and the bucket, then enforces signatures.
    public func start() throws {
        lock.lock(); defer { lock.unlock() }
        if let process, process.isRunning { return }
        let p = try BackgroundProcess(try Self.python(), [script.path, "serve", "127.0.0.1", String(port)],
                                      logFile: dir.appendingPathComponent("moto.log"))
        let deadline = Date().addingTimeInterval(60)
        while !FreePort.isListening(port: port) {
            guard p.isRunning, Date() < deadline else {
                p.stop()
                throw ShellError("moto_server did not start on port \(port): \(p.log().suffix(2000))")
            }
            usleep(100_000)
        }
        process = p
        let setup = try runTool(["op": "setup"])
        guard let key = setup["access_key_id"] as? String, let secret = setup["secret_access_key"] as? String else {
            throw ShellError("moto setup gave no access key: \(setup)")
        }
        accessKeyId = key
        secretAccessKey = secret
    }

    public func stop() {
        lock.lock(); defer { lock.unlock() }
        process?.stop()
        process = nil
    }

    /// moto's log so far.
    public func log() -> String { process?.log() ?? "" }

    // MARK: server side, through boto3

    /// Puts `files` (key → bytes) and zero-byte folder markers ("key/") into the bucket.
    public func seed(files: [String: Data], folderMarkers: [String] = []) throws {
        _ = try runTool(["op": "seed", "files": files.mapValues { $0.base64EncodedString() }, "folders": folderMarkers])
    }

    /// Puts `count` small objects named `prefix` + zero-padded number, in one Python process.
    public func seedMany(prefix: String, count: Int) throws {
        _ = try runTool(["op": "many", "prefix": prefix, "count": count])
    }

    /// An object's bytes, or nil when there is no such key.
    public func get(_ key: String) throws -> Data? {
        let r = try runTool(["op": "get", "key": key])
        return (r["data"] as? String).flatMap { Data(base64Encoded: $0) }
    }

    /// The bytes of each key that exists, in one round of requests.
    public func get(_ keys: [String]) throws -> [String: Data] {
        let r = try runTool(["op": "getmany", "keys": keys])
        return ((r["data"] as? [String: String]) ?? [:]).compactMapValues { Data(base64Encoded: $0) }
    }

    /// An object's ETag, or nil.
    public func etag(_ key: String) throws -> String? { try runTool(["op": "head", "key": key])["etag"] as? String }

    /// Whether the key exists, or (with `orPrefix`) any key below "key/".
    public func exists(_ key: String, orPrefix: Bool = true) throws -> Bool {
        try runTool(["op": "exists", "key": key, "prefix": orPrefix])["exists"] as? Bool ?? false
    }

    /// Every key below `prefix`.
    public func keys(prefix: String) throws -> [String] { try runTool(["op": "keys", "prefix": prefix])["keys"] as? [String] ?? [] }

    public func put(_ key: String, _ data: Data) throws { try seed(files: [key: data]) }

    /// Deletes `key` and every key below `key/`.
    public func delete(_ key: String) throws { _ = try runTool(["op": "delete", "key": key]) }

    private func runTool(_ request: [String: Any]) throws -> [String: Any] {
        let input = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let env = ["MOTO_ENDPOINT": endpoint, "MOTO_BUCKET": bucket, "MOTO_REGION": region,
                   "MOTO_KEY": accessKeyId, "MOTO_SECRET": secretAccessKey]
        let r = try Shell.run(try Self.python(), [script.path, "tool"], stdin: input, environment: env)
        guard r.status == 0, let json = try? JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any] else {
            throw ShellError("moto tool \(request["op"] ?? "") failed (\(r.status)): \(r.error.suffix(2000))")
        }
        return json
    }

    // MARK: the Python side

    static let toolSource = #"""
    import base64, json, os, sys

    def serve(host, port):
        # Verify SigV4 against the request line as sent (see MotoServer.swift for why).
        from moto.core.authorization import ActionAuthenticatorMixin
        original = ActionAuthenticatorMixin._authenticate_and_authorize_action
        def raw_uri_auth(self, iam_request_cls, resource="*"):
            env = getattr(getattr(self, "request", None), "environ", None) or {}
            raw = env.get("RAW_URI") or env.get("REQUEST_URI")
            if not raw:
                return original(self, iam_request_cls, resource)
            saved = self.uri
            self.uri = "http://signed" + raw
            try:
                return original(self, iam_request_cls, resource)
            finally:
                self.uri = saved
        ActionAuthenticatorMixin._authenticate_and_authorize_action = raw_uri_auth
        from moto.server import main
        sys.exit(main(["-H", host, "-p", port]))

    def client(key=None, secret=None):
        import boto3
        from botocore.config import Config
        return boto3.client("s3", endpoint_url=os.environ["MOTO_ENDPOINT"], region_name=os.environ["MOTO_REGION"],
                            aws_access_key_id=key or os.environ["MOTO_KEY"],
                            aws_secret_access_key=secret or os.environ["MOTO_SECRET"],
                            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def tool(req):
        op = req["op"]
        bucket = os.environ["MOTO_BUCKET"]
        if op == "setup":
            import boto3, requests
            endpoint = os.environ["MOTO_ENDPOINT"]
            iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                               aws_access_key_id="setup", aws_secret_access_key="setup")
            iam.create_user(UserName="favfs")
            iam.put_user_policy(UserName="favfs", PolicyName="all", PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
            key = iam.create_access_key(UserName="favfs")["AccessKey"]
            client("setup", "setup").create_bucket(Bucket=bucket)
            # From now on every request must be signed with a key moto knows.
            # (requests, not urllib: urllib's form Content-Type makes moto read an empty body)
            requests.post(endpoint + "/moto-api/reset-auth", data=b"0").raise_for_status()
            return {"access_key_id": key["AccessKeyId"], "secret_access_key": key["SecretAccessKey"]}
        s3 = client()
        if op == "seed":
            for k in req.get("folders", []):
                s3.put_object(Bucket=bucket, Key=k, Body=b"")
            for k, v in req.get("files", {}).items():
                s3.put_object(Bucket=bucket, Key=k, Body=base64.b64decode(v))
            return {}
        if op == "many":
            from concurrent.futures import ThreadPoolExecutor
            def put(i):
                s3.put_object(Bucket=bucket, Key="%s%05d" % (req["prefix"], i), Body=b"%d" % i)
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(put, range(req["count"])))
            return {}
        if op in ("get", "head"):
            try:
                if op == "head":
                    return {"etag": s3.head_object(Bucket=bucket, Key=req["key"])["ETag"]}
                return {"data": base64.b64encode(s3.get_object(Bucket=bucket, Key=req["key"])["Body"].read()).decode()}
            except s3.exceptions.ClientError as e:
                if e.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                    return {}
                raise
        if op == "getmany":
            out = {}
            for k in req["keys"]:
                try:
                    out[k] = base64.b64encode(s3.get_object(Bucket=bucket, Key=k)["Body"].read()).decode()
                except s3.exceptions.NoSuchKey:
                    pass
            return {"data": out}
        if op == "exists":
            try:
                s3.head_object(Bucket=bucket, Key=req["key"])
                return {"exists": True}
            except s3.exceptions.ClientError:
                pass
            if req.get("prefix"):
                r = s3.list_objects_v2(Bucket=bucket, Prefix=req["key"].rstrip("/") + "/", MaxKeys=1)
                return {"exists": r.get("KeyCount", 0) > 0}
            return {"exists": False}
        if op == "delete":
            k = req["key"].rstrip("/")
            s3.delete_object(Bucket=bucket, Key=k)
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=k + "/"):
                for o in page.get("Contents", []):
                    s3.delete_object(Bucket=bucket, Key=o["Key"])
            return {}
        if op == "keys":
            keys = []
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=req["prefix"]):
                keys += [o["Key"] for o in page.get("Contents", [])]
            return {"keys": keys}
        raise SystemExit("unknown op " + op)

    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    else:
        print(json.dumps(tool(json.load(sys.stdin))))
    """#
}

extension ServerRequirement {
    /// A moto server for a test (not started), or a skip when moto is missing — a failure under `CI=true`.
    public static func moto(bucket: String = "favfs-test", file: StaticString = #filePath, line: UInt = #line) throws -> MotoServer {
        guard MotoServer.isAvailable else {
            if TestEnvironment.isCI {
                XCTFail("\(MotoServer.missing) and CI=true", file: file, line: line)
                throw ShellError("moto missing under CI")
            }
            throw XCTSkip(MotoServer.missing)
        }
        return try MotoServer(bucket: bucket)
    }
}
