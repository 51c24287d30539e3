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
        .target(name: "ParleyCrypto", dependencies: ["COpenSSL"], swiftSettings: upcoming),

        // MARK: Layer 2: sans-I/O wire formats
        .target(name: "ParleyWireCore", swiftSettings: upcoming),
        .target(name: "ParleySTUN", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleyRTP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleySDP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleyWebSocket", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleySignaling", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),

        // MARK: Layer 4: products
        .executableTarget(
            name: "ParleyCLI",
            dependencies: ["ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling"],
            swiftSettings: upcoming
        ),

        // MARK: Tools: fuzz harness (real only under `make fuzz`) and benchmarks
        .executableTarget(
            name: "ParleyFuzz",
            dependencies: ["ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "ParleyBench",
            dependencies: ["ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling"],
            swiftSettings: upcoming
        ),

        // MARK: Tests mirror targets
        .testTarget(name: "ShimTests", dependencies: ["COpus", "CSRTP", "COpenSSL", "CSQLite", "CLinux"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCryptoTests", dependencies: ["ParleyCrypto"], swiftSettings: upcoming),
        .testTarget(name: "ParleyWireCoreTests", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .testTarget(name: "ParleySTUNTests", dependencies: ["ParleySTUN"], swiftSettings: upcoming),
        .testTarget(name: "ParleyRTPTests", dependencies: ["ParleyRTP"], swiftSettings: upcoming),
        .testTarget(name: "ParleySDPTests", dependencies: ["ParleySDP"], resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "ParleyWebSocketTests", dependencies: ["ParleyWebSocket"], swiftSettings: upcoming),
        .testTarget(name: "ParleySignalingTests", dependencies: ["ParleySignaling"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyCLI", "ParleyWireCore"], swiftSettings: upcoming),
    ],
    swiftLanguageModes: [.v6]
)
