// swift-tools-version: 6.0
// Parley: self-hosted in-app calling. One package; targets are listed by layer, lowest
// first, as the layer table in docs/architecture.md orders them (`make layer-check`
// enforces the table, this order, and that every dependency is imported).
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// Apple-only dependencies, declared only when the manifest is evaluated on Darwin (an app
// built for iOS evaluates it on its Mac): on Linux `swift build` resolves no remote package
// at all. Google's libwebrtc for Apple platforms, from the stasel/WebRTC binary distribution
// (unmodified upstream builds, module `WebRTC`, iOS 12+ / macOS 10.11+), pinned to a release
// whose manifest was read; the Apple media engine (ParleySDKApple) is written against it.
#if os(macOS)
let appleDependencies: [Package.Dependency] = [
    .package(url: "https://github.com/stasel/WebRTC.git", exact: "130.0.0"),
]
let appleEngineDependencies: [Target.Dependency] = [
    .product(name: "WebRTC", package: "WebRTC", condition: .when(platforms: [.iOS, .macOS])),
]
#else
let appleDependencies: [Package.Dependency] = []
let appleEngineDependencies: [Target.Dependency] = []
#endif

let package = Package(
    name: "Parley",
    // What the SDK needs on Apple platforms: `Duration` and `ContinuousClock` (iOS 16,
    // macOS 13). The server and the tools build on Linux only.
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [
        .executable(name: "parley", targets: ["ParleyCLI"]),
        // What an app adds: the SDK (its portable core, and this platform's engines).
        .library(name: "ParleySDK", targets: ["ParleySDK"]),
        // The portable core alone, for AppleCheck/ (docs/development.md), which compiles
        // its own copy of ParleySDKApple against mirror modules over it, and for engines
        // written outside this package.
        .library(name: "ParleySDKCore", targets: ["ParleySDKCore"]),
        .executable(name: "parleyd", targets: ["ParleyDaemon"]),
        // Exists for AppleCheck/ only (docs/development.md): its functional `WebRTC` and
        // `CryptoKit` mirrors run calls over our media leg and HMAC on Linux. Not for apps.
        .library(name: "ParleyMediaLegForMirrors", targets: [
            "ParleyMediaLegIO", "ParleyMediaLegCore", "ParleyMediaCore", "ParleyNetLinux", "ParleyNetCore", "ParleyCrypto",
        ]),
        .library(name: "ParleyWire", targets: [
            "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling",
        ]),
    ],
    dependencies: appleDependencies,
    targets: [
        // MARK: Layer 0: base (bytes, text, JSON; sans-I/O)
        .target(name: "ParleyWireCore", swiftSettings: upcoming),
        // The call model: pure values below the call core, the store and the protocol
        .target(name: "ParleyCallModel", swiftSettings: upcoming),

        // MARK: Layer 1: C shims (one per Debian library)
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLinux"),
        // alsa-lib for device audio on Linux (ParleyAudioDeviceLinux)
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),

        // MARK: Layer 2: thin Swift wrappers over the shims
        .target(name: "ParleyCrypto", dependencies: ["COpenSSL", "ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleySRTP", dependencies: ["CSRTP"], swiftSettings: upcoming),
        .target(name: "ParleyOpus", dependencies: ["COpus"], swiftSettings: upcoming),
        .target(name: "ParleySQLite", dependencies: ["CSQLite"], swiftSettings: upcoming),

        // MARK: Layer 3: wire formats (sans-I/O)
        .target(name: "ParleySTUN", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleyRTP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleySDP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        // SIP messages, URIs and digest authentication (RFC 3261, 8760): sans-I/O
        .target(name: "ParleySIP", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        .target(name: "ParleyHTTP", dependencies: ["ParleyWireCore"], swiftSettings: upcoming),
        .target(name: "ParleyWebSocket", dependencies: ["ParleyWireCore", "ParleyCrypto", "ParleyHTTP"], swiftSettings: upcoming),
        .target(name: "ParleySignaling", dependencies: ["ParleyWireCore", "ParleyCallModel"], swiftSettings: upcoming),
        .target(name: "ParleyAuth", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        // Sinch Voice v1 callbacks (ICE, ACE, DiCE, PIE, notify), SVAML and signed requests: sans-I/O (docs/backend.md)
        .target(name: "ParleyVoiceAPI", dependencies: ["ParleyWireCore", "ParleyCrypto"], swiftSettings: upcoming),
        // Socket addresses, RFC 7983 demultiplexing, port bookkeeping: no sockets
        .target(name: "ParleyNetCore", swiftSettings: upcoming),

        // MARK: Layer 4: protocol and call cores (sans-I/O)
        .target(name: "ParleyICECore", dependencies: ["ParleySTUN"], swiftSettings: upcoming),
        .target(name: "ParleyMediaCore", dependencies: ["ParleyWireCore", "ParleyRTP", "ParleyOpus"], swiftSettings: upcoming),
        // The audio leg, sans-I/O (MediaLegCore, the media topologies)
        .target(
            name: "ParleyMediaLegCore",
            dependencies: ["ParleyWireCore", "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyICECore", "ParleyCrypto", "ParleySRTP", "ParleyMediaCore"],
            swiftSettings: upcoming
        ),
        .target(name: "ParleyCallCore", dependencies: ["ParleyWireCore", "ParleySignaling", "ParleyCallModel"], swiftSettings: upcoming),
        // The server's session protocol (hello, resume, heartbeat, buffering, close codes)
        .target(name: "ParleySessionCore", dependencies: ["ParleyWireCore", "ParleySignaling", "ParleyCallCore"], swiftSettings: upcoming),
        // SIP transactions, dialogs and the UAC side of a B2BUA leg (RFC 3261 §12-17, RFC 6026, RFC 4028): sans-I/O
        .target(name: "ParleySIPCore", dependencies: ["ParleyWireCore", "ParleySIP"], swiftSettings: upcoming),

        // MARK: Layer 5: I/O runtime (epoll loops, sockets, threads; Linux)
        .target(name: "ParleyNetLinux", dependencies: ["CLinux", "ParleyWireCore", "ParleyNetCore"], swiftSettings: upcoming),

        // MARK: Layer 6: I/O engines
        .target(name: "ParleyEdgeIO", dependencies: ["ParleyWireCore", "ParleyNetCore", "ParleyNetLinux", "ParleyHTTP", "ParleyWebSocket", "ParleyCrypto"], swiftSettings: upcoming),
        // The ws:// and wss:// client: a client must not link the server's listener
        .target(name: "ParleyWebSocketClientIO", dependencies: ["ParleyNetCore", "ParleyNetLinux", "ParleyWebSocket", "ParleyCrypto"], swiftSettings: upcoming),
        // The audio leg's shell on the epoll loops: the MediaLeg actor
        .target(
            name: "ParleyMediaLegIO",
            dependencies: ["ParleyMediaLegCore", "ParleyICECore", "ParleySTUN", "ParleyRTP", "ParleyMediaCore", "ParleyNetCore", "ParleyNetLinux"],
            swiftSettings: upcoming
        ),
        // SIP's transport layer (RFC 3261 §18): UDP and TCP on the parley-sip loop (docs/sip.md)
        .target(name: "ParleySIPIO", dependencies: ["ParleyWireCore", "ParleyNetCore", "ParleyNetLinux", "ParleySIP", "ParleyCrypto"], swiftSettings: upcoming),
        // The signaling bus and device directory ports with their in-process adapters
        .target(name: "ParleyBus", dependencies: ["ParleyCallCore", "ParleySignaling"], swiftSettings: upcoming),
        .target(name: "ParleyStore", dependencies: ["ParleyWireCore", "ParleySQLite", "ParleyCallModel"], swiftSettings: upcoming),
        // Issue 5, server side: VoIP push (docs/push.md)
        .target(name: "ParleyPush", dependencies: ["CCurl", "ParleyWireCore", "ParleyCrypto", "ParleySignaling"], swiftSettings: upcoming),
        // Microphone and speaker on Linux through ALSA, each on its own thread (docs/media-device-audio.md)
        .target(name: "ParleyAudioDeviceLinux", dependencies: ["CALSA", "CLinux", "ParleyWireCore", "ParleyMediaCore"], swiftSettings: upcoming),

        // MARK: Layer 7: products: parleyd's core and the client SDK (docs/sdk.md)
        .target(
            name: "ParleyServer",
            dependencies: ["ParleyWireCore", "ParleyNetCore", "ParleyNetLinux", "ParleyHTTP", "ParleyEdgeIO", "ParleyAuth", "ParleySignaling", "ParleyCallModel", "ParleyCallCore", "ParleySessionCore", "ParleyBus", "ParleyStore", "ParleyMediaLegCore", "ParleyCrypto", "ParleyICECore", "ParleySTUN", "ParleyMediaCore", "ParleyWebSocket", "ParleyPush", "ParleyRTP", "ParleySIPIO", "ParleySIP", "ParleySIPCore", "ParleySDP", "ParleyVoiceAPI"],
            swiftSettings: upcoming
        ),
        // The SDK's portable core: Foundation and portable Parley targets only, no C library,
        // no Glibc; it drives the engines below through protocols (ParleyEngines)
        .target(name: "ParleySDKCore", dependencies: ["ParleyWireCore", "ParleySignaling"], swiftSettings: upcoming),
        // The SDK's engines on Linux: our WebSocket client, our media leg, OpenSSL's HMAC
        .target(
            name: "ParleySDKLinux",
            dependencies: ["ParleySDKCore", "ParleyNetCore", "ParleyNetLinux", "ParleyWebSocket", "ParleyWebSocketClientIO", "ParleyCrypto", "ParleyMediaCore", "ParleyMediaLegCore", "ParleyMediaLegIO", "ParleyAudioDeviceLinux"],
            swiftSettings: upcoming
        ),
        // The SDK's engines and adapters on Apple platforms: the URLSessionWebSocketTask
        // transport (compiled and tested here too), and the CallKit, LiveCommunicationKit
        // and PushKit adapters, each inside `#if canImport(<framework>)` (nothing here; type-
        // checked against mirror frameworks by AppleCheck/, `make apple-check`). Only the
        // core's public API.
        .target(name: "ParleySDKApple", dependencies: ["ParleySDKCore"] + appleEngineDependencies, swiftSettings: upcoming),
        // What an app imports: the core and this platform's engines (Linux's only on Linux,
        // so an app for an Apple platform builds no server target and no C shim)
        .target(
            name: "ParleySDK",
            dependencies: [
                "ParleySDKCore",
                .target(name: "ParleySDKLinux", condition: .when(platforms: [.linux])),
                .target(name: "ParleySDKApple", condition: .when(platforms: [.iOS, .macOS])),
            ],
            swiftSettings: upcoming
        ),

        // MARK: Layer 8: executables: parleyd (docs/operations.md) and the parley softphone
        .executableTarget(
            name: "ParleyDaemon",
            dependencies: ["ParleyServer", "ParleyStore", "ParleyAuth", "ParleyWireCore", "ParleyNetCore", "ParleyPush", "ParleyBus", "ParleyCallCore", "ParleyCallModel", "ParleyNetLinux", "ParleySIPCore", "ParleySIP"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "ParleyCLI",
            dependencies: ["ParleyWireCore", "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling", "ParleyAuth", "ParleyMediaCore", "ParleySDK", "ParleySDKLinux"],
            swiftSettings: upcoming
        ),

        // MARK: Layer 9: tools: fuzz harness (real only under `make fuzz`) and benchmarks
        .executableTarget(
            name: "ParleyFuzz",
            dependencies: ["ParleyWireCore", "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleySIP", "ParleyWebSocket", "ParleySignaling", "ParleySRTP", "ParleyICECore", "ParleyMediaCore", "ParleyHTTP", "ParleyAuth"],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "ParleyBench",
            dependencies: ["ParleyWireCore", "ParleySTUN", "ParleyRTP", "ParleySDP", "ParleyWebSocket", "ParleySignaling", "ParleyCrypto", "ParleySRTP", "ParleyICECore", "ParleyOpus", "ParleyMediaCore", "ParleyNetCore", "ParleyNetLinux", "ParleyMediaLegCore", "ParleyAuth", "ParleyEdgeIO", "ParleyWebSocketClientIO", "ParleyStore", "ParleyCallModel", "ParleyCallCore", "ParleyPush", "ParleyMediaLegIO", "ParleySIP"],
            swiftSettings: upcoming
        ),

        // MARK: Layer 10: test support
        .target(name: "ParleyTestSupport", dependencies: ["ParleyNetCore", "ParleyWireCore"], path: "Tests/ParleyTestSupport", swiftSettings: upcoming),
        .target(name: "ParleyPushTestSupport", dependencies: ["ParleyPush", "ParleyCrypto"], path: "Tests/ParleyPushTestSupport", swiftSettings: upcoming),

        // MARK: Layer 11: tests, one suite per target
        .testTarget(name: "ShimTests", dependencies: ["COpus", "CSRTP", "COpenSSL", "CSQLite", "CLinux", "CALSA"], swiftSettings: upcoming),
        .testTarget(name: "ParleyWireCoreTests", dependencies: ["ParleyWireCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCryptoTests", dependencies: ["ParleyCrypto", "ParleyWireCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySRTPTests", dependencies: ["ParleySRTP", "ParleyTestSupport"], exclude: ["vectors"], swiftSettings: upcoming),
        .testTarget(name: "ParleyOpusTests", dependencies: ["ParleyOpus", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySQLiteTests", dependencies: ["ParleySQLite", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySTUNTests", dependencies: ["ParleySTUN", "ParleyWireCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyRTPTests", dependencies: ["ParleyRTP", "ParleyWireCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySDPTests", dependencies: ["ParleySDP", "ParleyTestSupport"], resources: [.copy("Fixtures")], swiftSettings: upcoming),
        .testTarget(name: "ParleySIPTests", dependencies: ["ParleySIP", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySIPIOTests", dependencies: ["ParleySIPIO", "ParleySIP", "ParleyNetCore", "ParleyNetLinux", "ParleyWireCore", "ParleyCrypto", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyHTTPTests", dependencies: ["ParleyHTTP", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyWebSocketTests", dependencies: ["ParleyWebSocket", "ParleyHTTP", "ParleyWireCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySignalingTests", dependencies: ["ParleySignaling", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyAuthTests", dependencies: ["ParleyAuth", "ParleyWireCore", "ParleyTestSupport"], exclude: ["reference"], swiftSettings: upcoming),
        .testTarget(name: "ParleyVoiceAPITests", dependencies: ["ParleyVoiceAPI", "ParleyWireCore", "ParleyCrypto", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyICECoreTests", dependencies: ["ParleyICECore", "ParleySTUN", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyMediaCoreTests", dependencies: ["ParleyMediaCore", "ParleyRTP", "ParleyOpus", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCallCoreTests", dependencies: ["ParleyWireCore", "ParleyCallCore", "ParleyCallModel", "ParleySignaling", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySessionCoreTests", dependencies: ["ParleySessionCore", "ParleySignaling", "ParleyCallCore", "ParleyCallModel"], swiftSettings: upcoming),
        .testTarget(name: "ParleySIPCoreTests", dependencies: ["ParleySIPCore", "ParleySIP", "ParleySDP", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyBusTests", dependencies: ["ParleyBus", "ParleyCallCore", "ParleySignaling"], swiftSettings: upcoming),
        .testTarget(name: "ParleyNetCoreTests", dependencies: ["ParleyNetCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyNetLinuxTests", dependencies: ["ParleyNetLinux", "ParleyNetCore"], swiftSettings: upcoming),
        .testTarget(name: "ParleyEdgeIOTests", dependencies: ["ParleyEdgeIO", "ParleyWebSocketClientIO", "ParleyNetCore", "ParleyNetLinux", "ParleyHTTP", "ParleyWebSocket", "ParleyCrypto", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(
            name: "ParleyMediaLegCoreTests",
            dependencies: ["ParleyWireCore", "ParleyMediaLegCore", "ParleyMediaCore", "ParleySDP", "ParleyICECore", "ParleyCrypto", "ParleySTUN", "ParleyRTP", "ParleySRTP", "ParleyNetCore", "ParleyNetLinux", "ParleyTestSupport", "ParleyMediaLegIO"],
            swiftSettings: upcoming
        ),
        .testTarget(name: "ParleyStoreTests", dependencies: ["ParleyStore", "ParleyCallModel", "ParleySQLite", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyAudioDeviceLinuxTests", dependencies: ["ParleyAudioDeviceLinux", "ParleyMediaCore"], swiftSettings: upcoming),
        .testTarget(name: "ParleyPushTests", dependencies: ["ParleyPush", "ParleyPushTestSupport", "ParleyCrypto", "ParleyWireCore", "ParleySignaling", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(
            name: "ParleyServerTests",
            dependencies: ["ParleyServer", "ParleyTestSupport", "ParleyBus", "ParleyPush", "ParleyPushTestSupport", "ParleyWireCore", "ParleyHTTP", "ParleyEdgeIO", "ParleyWebSocketClientIO", "ParleyAuth", "ParleySignaling", "ParleyStore", "ParleyCallModel", "ParleyCallCore", "ParleyMediaLegCore", "ParleyMediaCore", "ParleyCrypto", "ParleyNetCore", "ParleyNetLinux", "ParleyICECore", "ParleySTUN", "ParleySQLite", "ParleyMediaLegIO", "ParleySIPIO", "ParleySIP", "ParleySIPCore", "ParleyVoiceAPI"],
            swiftSettings: upcoming
        ),
        .testTarget(name: "ParleySDKCoreTests", dependencies: ["ParleySDKCore", "ParleySignaling", "ParleyCrypto", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleySDKLinuxTests", dependencies: ["ParleySDKLinux", "ParleySDKCore", "ParleyMediaCore", "ParleyMediaLegCore"], swiftSettings: upcoming),
        .testTarget(name: "ParleySDKAppleTests", dependencies: ["ParleySDKApple", "ParleySDKCore"], swiftSettings: upcoming),
        .testTarget(name: "ParleySDKTests", dependencies: ["ParleySDK", "ParleySDKCore", "ParleySDKLinux", "ParleyEdgeIO", "ParleyWebSocket", "ParleyMediaLegCore", "ParleySignaling", "ParleyMediaCore", "ParleyNetCore", "ParleyNetLinux", "ParleyCrypto", "ParleyMediaLegIO"], swiftSettings: upcoming),
        // Issue 5, SDK side: the SDK's push relay against a real server (docs/push-and-callkit.md)
        .testTarget(name: "ParleySDKPushTests", dependencies: ["ParleySDK", "ParleyServer", "ParleyCallModel", "ParleyPushTestSupport", "ParleyPush", "ParleyStore", "ParleyAuth", "ParleyNetCore", "ParleyTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "ParleyDaemonTests", dependencies: ["ParleyDaemon", "ParleyServer", "ParleyStore", "ParleyNetCore", "ParleyNetLinux", "ParleyCrypto", "ParleyPush", "ParleyCallModel", "ParleySIP", "ParleySIPCore"], swiftSettings: upcoming),
        .testTarget(name: "ParleyBenchTests", dependencies: ["ParleyBench"], swiftSettings: upcoming),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyCLI", "ParleyAuth", "ParleySDK", "ParleyTestSupport"], swiftSettings: upcoming),
        // Runs the built `parleyd` and `parley` executables: `swift build` must run first.
        .testTarget(name: "ParleyEndToEndTests", dependencies: ["ParleyMediaCore", "ParleyPushTestSupport", "ParleySIP", "ParleySIPIO", "ParleyNetCore", "ParleyNetLinux", "ParleyWireCore"], swiftSettings: upcoming),
    ],
    swiftLanguageModes: [.v6]
)
