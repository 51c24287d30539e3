// swift-tools-version: 6.0
// Parley: self-hosted in-app calling. One package, layered bottom to top:
// C shims -> C wrappers -> sans-I/O wire formats -> engines -> products.
// See docs/architecture.md.
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Parley",
    products: [
        .executable(name: "parley", targets: ["ParleyCLI"]),
        .library(name: "ParleySDK", targets: ["ParleySDK"]),
        .executable(name: "parleyd", targets: ["ParleyDaemon"]),
        .library(name: "ParleyWire", targets: [
            "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling",
        ]),
    ],
    targets: [
        // MARK: Layer 1: C shims (one per Debian library)
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLinux"),

        // MARK: Layer 1b: thin Swift wrappers over the shims
        .target(name: "ParleyCrypto", dependencies: ["COpenSSL", "ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleySRTP", dependencies: ["CSRTP"], swiftSettings: upcoming),
        .target(name: "ParleyOpus", dependencies: ["COpus"], swiftSettings: upcoming),
        .target(name: "ParleySQLite", dependencies: ["CSQLite"], swiftSettings: upcoming),

        // MARK: Layer 2: the call model (pure values below the call core, the store and the protocol)
        .target(name: "ParleyCallModel", swiftSettings: upcoming),

        // MARK: Layer 2: sans-I/O wire formats
        .target(name: "ParleyWireCore", swiftSettings: upcoming),
        .target(name: "ParleySTUN", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleyRTP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleySDP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleyWebSocket", dependencies: ["ParleyWireCore", "ParleyCrypto", "ParleyHTTP"], swiftSettings: upcoming),
        .target(name: "ParleySignaling", dependencies: ["ParleyWireCore", "ParleyCallModel"], swiftSettings: upcoming),
        .target(name: "ParleyICE", dependencies: ["ParleyWireCore", "ParleySTUN", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleyHTTP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleyAuth", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),

        // MARK: Layer 3: engines
        .target(name: "ParleyMedia", dependencies: ["ParleyWireCore", "ParleyRTP", "ParleyOpus"], swiftSettings: upcoming),
        .target(name: "ParleyNet", dependencies: ["CLinux", "ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleyEdge", dependencies: ["ParleyWireCore", "ParleyNet", "ParleyHTTP", "ParleyWebSocket", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleyStore", dependencies: ["ParleySQLite", "ParleyCallModel"], swiftSettings: upcoming),
        .target(name: "ParleyCalling", dependencies: ["ParleyWireCore", "ParleySignaling", "ParleyCallModel"], swiftSettings: upcoming),
        // The audio leg, sans-I/O (MediaLegCore, the media topologies), and its shell on
        // ParleyNet (the MediaLeg actor, SRTPForwarder).
        .target(
            name: "ParleyMediaLeg",
            dependencies: ["ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyICE", "ParleyCrypto", "ParleySRTP", "ParleyMedia"],
            swiftSettings: upcoming
        ),
        .target(
            name: "ParleyMediaLegIO",
            dependencies: ["ParleyMediaLeg", "ParleyICE", "ParleySTUN", "ParleyRTP", "ParleySRTP", "ParleyMedia", "ParleyNet"],
            swiftSettings: upcoming
        ),

        // MARK: Layer 4: products
        .target(
            name: "ParleyServer",
            dependencies: ["ParleyWireCore", "ParleyNet", "ParleyHTTP", "ParleyEdge", "ParleyAuth", "ParleySignaling", "ParleyCallModel", "ParleyCalling", "ParleyStore", "ParleyMediaLeg", "ParleyCrypto", "ParleySDP", "ParleyICE", "ParleySTUN", "ParleyRTP", "ParleyMedia", "ParleyWebSocket", "ParleyPush"],
            swiftSettings: upcoming
        ),
        // MARK: Layer 4: the client SDK (docs/sdk.md)
        .target(
            name: "ParleySDK",
            dependencies: ["ParleyWireCore", "ParleyNet", "ParleyWebSocket", "ParleyEdge", "ParleySignaling", "ParleyCrypto", "ParleyMedia", "ParleyMediaLeg", "ParleyMediaLegIO"],
            swiftSettings: upcoming
        ),
        .testTarget(name: "ParleySDKTests", dependencies: ["ParleySDK", "ParleyEdge", "ParleyWebSocket", "ParleyMediaLeg", "ParleyMediaLegIO", "ParleyTestSupport"], swiftSettings: upcoming),
        .executableTarget(
            name: "ParleyCLI",
            dependencies: ["ParleyWireCore", "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling", "ParleyAuth", "ParleyMedia", "ParleySDK"],
            swiftSettings: upcoming
        ),

        // MARK: parleyd: configuration, admin commands, serve (docs/operations.md)
        .executableTarget(
            name: "ParleyDaemon",
            dependencies: ["ParleyServer", "ParleyStore", "ParleyAuth", "ParleyNet", "ParleyCalling", "ParleyPush"],
            swiftSettings: upcoming
        ),
        .testTarget(name: "ParleyDaemonTests", dependencies: ["ParleyDaemon", "ParleyServer", "ParleyStore", "ParleyNet", "ParleyTestSupport", "ParleyCrypto", "ParleyPush"], swiftSettings: upcoming),

        // MARK: Tools: fuzz harness (real only under `make fuzz`) and benchmarks
        .executableTarget(
            name: "ParleyFuzz",
            dependencies: ["ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling", "ParleyCrypto", "ParleySRTP", "ParleyICE", "ParleyOpus", "ParleyMedia", "ParleyNet", "ParleyHTTP", "ParleyAuth"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "ParleyBench",
            dependencies: ["ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling", "ParleyCrypto", "ParleySRTP", "ParleyICE", "ParleyOpus", "ParleyMedia", "ParleyNet", "ParleyMediaLeg", "ParleyMediaLegIO", "ParleyHTTP", "ParleyAuth", "ParleyEdge", "ParleySQLite", "ParleyStore", "ParleyCallModel", "ParleyCalling", "ParleyPush"],
            swiftSettings: upcoming
        ),

        // MARK: Tests mirror targets
        .target(name: "ParleyTestSupport", path: "Tests/ParleyTestSupport", swiftSettings: upcoming),
        .testTarget(name: "ShimTests", dependencies: ["COpus", "CSRTP", "COpenSSL", "CSQLite", "CLinux"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCryptoTests", dependencies: ["ParleyCrypto", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyWireCoreTests", dependencies: ["ParleyWireCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySTUNTests", dependencies: ["ParleySTUN", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyRTPTests", dependencies: ["ParleyRTP", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySDPTests", dependencies: ["ParleySDP", "ParleyTestSupport"], resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "ParleyWebSocketTests", dependencies: ["ParleyWebSocket", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySignalingTests", dependencies: ["ParleySignaling", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyCLI", "ParleyAuth", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySRTPTests", dependencies: ["ParleySRTP", "ParleyTestSupport"], exclude: ["vectors"], swiftSettings: upcoming),
        .testTarget(name: "ParleyOpusTests", dependencies: ["ParleyOpus", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyICETests", dependencies: ["ParleyICE", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyMediaTests", dependencies: ["ParleyMedia", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyNetTests", dependencies: ["ParleyNet", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyMediaLegTests", dependencies: ["ParleyMediaLeg", "ParleyMediaLegIO", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySQLiteTests", dependencies: ["ParleySQLite", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyHTTPTests", dependencies: ["ParleyHTTP", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyAuthTests", dependencies: ["ParleyAuth", "ParleyTestSupport"], exclude: ["reference"], swiftSettings: upcoming),
        .testTarget(name: "ParleyEdgeTests", dependencies: ["ParleyEdge", "ParleyTestSupport", "ParleyCrypto"], swiftSettings: upcoming),
        .testTarget(name: "ParleyStoreTests", dependencies: ["ParleyStore", "ParleyCallModel", "ParleySQLite", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCallingTests", dependencies: ["ParleyCalling", "ParleyCallModel", "ParleyTestSupport"], swiftSettings: upcoming),
        // MARK: Issue 5, server side: VoIP push (docs/push.md)
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "ParleyPush", dependencies: ["CCurl", "ParleyWireCore", "ParleyCrypto", "ParleySignaling"], swiftSettings: upcoming),
        .target(name: "ParleyPushTestSupport", dependencies: ["ParleyPush", "ParleyCrypto"], path: "Tests/ParleyPushTestSupport", swiftSettings: upcoming),
        .testTarget(name: "ParleyPushTests", dependencies: ["ParleyPush", "ParleyPushTestSupport", "ParleyCrypto", "ParleyWireCore", "ParleySignaling", "ParleyTestSupport"], swiftSettings: upcoming),

        .testTarget(name: "ParleyServerTests", dependencies: ["ParleyServer", "ParleyTestSupport", "ParleyPush", "ParleyPushTestSupport", "ParleyWireCore", "ParleyEdge", "ParleyAuth", "ParleySignaling", "ParleyStore", "ParleyCallModel", "ParleyCalling", "ParleyMediaLeg", "ParleyMediaLegIO", "ParleyMedia", "ParleyCrypto", "ParleyNet", "ParleyWebSocket", "ParleyICE", "ParleySTUN", "ParleySQLite"], swiftSettings: upcoming),
        // MARK: Issue 5, SDK side: the SDK's push relay against a real server (docs/push-and-callkit.md)
        .testTarget(name: "ParleySDKPushTests", dependencies: ["ParleySDK", "ParleyServer", "ParleyPushTestSupport", "ParleyPush", "ParleyStore", "ParleyAuth", "ParleyNet", "ParleyTestSupport"], swiftSettings: upcoming),
        // Runs the built `parleyd` and `parley` executables: `swift build` must run first.
        .testTarget(name: "ParleyEndToEndTests", dependencies: ["ParleyMedia", "ParleyTestSupport", "ParleyPushTestSupport"], swiftSettings: upcoming),
    ],
    swiftLanguageModes: [.v6]
)
