// swift-tools-version:6.0
import PackageDescription

// Every module of ours touches C (libcurl, libfuse, POSIX): a warning there (a temporary
// pointer from `&`, an unused result) is treated as the bug it usually is.
let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

let package = Package(
    name: "favfs",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "favfs", targets: ["favfs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // C shims: the only C in the project.
        .systemLibrary(name: "CFuse", path: "CFuse", pkgConfig: "fuse3",
                       providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        // WebDAV multistatus bodies read with libxml2's SAX2 interface.
        .systemLibrary(name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0",
                       providers: [.apt(["libxml2-dev"])]),
        // JPEG previews to PNG thumbnails (libjpeg-turbo, libpng).
        .systemLibrary(name: "CImage", path: "Sources/CImage", pkgConfig: "libpng",
                       providers: [.apt(["libjpeg62-turbo-dev", "libpng-dev"])]),
        // SMB shares (Samba, Windows, NAS boxes) through Samba's client library.
        .systemLibrary(name: "CSMBClient", path: "Sources/CSMBClient", pkgConfig: "smbclient",
                       providers: [.apt(["libsmbclient-dev"])]),
        // Linux calls behind _GNU_SOURCE or macros (hole punching, renameat2, openat2, gettid).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),

        // Transport: async libcurl, one multi handle on one thread.
        .target(name: "Curl", dependencies: ["CCurl", .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),

        // Provider core: items, placeholders, content cache; no FUSE, no protocol code.
        .target(name: "FavFSCore", dependencies: [
            "CLinux",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),

        // One folder per protocol.
        .target(name: "Providers", dependencies: ["FavFSCore", "Curl", "CLibXML2", "CLinux", "CSMBClient",
                                                  .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),

        // FUSE low-level ops -> core calls; knows nothing of providers.
        .target(name: "FUSEBridge", dependencies: ["CFuse", "CLinux", "FavFSCore",
                                                   .product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),

        // Desktop notifications: a minimal D-Bus client (no libdbus) and the rate limit; knows
        // nothing of the core (the favfs target turns its events into notes). A library of its
        // own so that its tests can run it against a real dbus-daemon.
        .target(name: "DesktopNotify", dependencies: [.product(name: "Logging", package: "swift-log")],
                swiftSettings: strict),

        .executableTarget(name: "favfs", dependencies: [
            "FUSEBridge", "FavFSCore", "Providers", "CImage", "DesktopNotify",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),

        // Real servers for tests (Apache mod_dav, ...), started on loopback by the tests themselves.
        .target(name: "TestSupport", path: "Tests/TestSupport"),

        .testTarget(name: "FavFSCoreTests", dependencies: ["FavFSCore", "Providers", "FUSEBridge",
                                                          .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "FUSEBridgeTests", dependencies: ["FUSEBridge", "FavFSCore"]),
        .testTarget(name: "DesktopNotifyTests", dependencies: ["DesktopNotify", "TestSupport"]),
        // Seeded runs of the core (no FUSE) over the local provider with injected faults and
        // crashes, checked against a reference model.
        .testTarget(name: "ReferenceModelTests", dependencies: ["FavFSCore", "Providers"]),
        .testTarget(name: "CurlTests", dependencies: ["Curl", "TestSupport"]),
        .testTarget(name: "ProvidersTests", dependencies: ["Providers", "FavFSCore", "Curl", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport"]),
    ]
)
