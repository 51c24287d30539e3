// swift-tools-version: 6.0
// AppleCheck: type-checks the SDK's Apple adapters (../Sources/ParleySDKApple) on Linux,
// against mirror modules named as Apple's frameworks, and runs the CallKit adapter's flows
// over the CallKit mirror. Not part of the main package's build: `make apple-check` runs
// it with its own scratch path. Offline: its one dependency is the root package, by path.
// How it works and how to mirror another API: README.md here, docs/development.md.
import PackageDescription

let upcoming: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "AppleCheck",
    dependencies: [
        .package(name: "Parley", path: ".."),
    ],
    targets: [
        // What the mirrors share: a lock and a box (no Apple API).
        .target(name: "MirrorSupport", swiftSettings: upcoming),
        // Mirrors: only the API ParleySDKApple uses, written from Apple's documentation.
        // AVAudioPlayer reads WAV files with the root's WAV reader (ParleyMediaLegForMirrors).
        .target(
            name: "AVFAudio",
            dependencies: ["MirrorSupport", .product(name: "ParleyMediaLegForMirrors", package: "Parley")],
            swiftSettings: upcoming
        ),
        .target(name: "AVFoundation", dependencies: ["AVFAudio"], swiftSettings: upcoming),
        .target(name: "CallKit", dependencies: ["AVFAudio", "MirrorSupport"], swiftSettings: upcoming),
        .target(name: "PushKit", swiftSettings: upcoming),
        .target(name: "LiveCommunicationKit", dependencies: ["AVFAudio"], swiftSettings: upcoming),
        // Functional mirrors: libwebrtc's Objective-C API over the root's media leg (calls
        // really connect, to a real parleyd), CryptoKit's HMAC over the root's OpenSSL.
        .target(
            name: "WebRTC",
            dependencies: ["AVFAudio", "MirrorSupport", .product(name: "ParleyMediaLegForMirrors", package: "Parley")],
            swiftSettings: upcoming
        ),
        .target(name: "CryptoKit", dependencies: [.product(name: "ParleyMediaLegForMirrors", package: "Parley")], swiftSettings: upcoming),

        // The adapters' own sources (Sources/ParleySDKApple is a symlink to the root's): with
        // the mirrors as dependencies, `#if canImport(CallKit)` and the others are true here.
        // Another name than the root's target: SwiftPM wants target names unique across the
        // package graph, and the root package (whose ParleySDKApple is empty here) is in it.
        .target(
            name: "ParleySDKAppleChecked",
            dependencies: [
                .product(name: "ParleySDKCore", package: "Parley"),
                "CallKit", "PushKit", "AVFoundation", "LiveCommunicationKit", "WebRTC", "CryptoKit",
            ],
            path: "Sources/ParleySDKApple",
            swiftSettings: upcoming
        ),

        .testTarget(
            name: "ParleySDKAppleCheckedTests",
            dependencies: [
                "ParleySDKAppleChecked", "CallKit", "AVFAudio", "WebRTC", "CryptoKit",
                .product(name: "ParleySDKCore", package: "Parley"),
                // The Linux signaling transport (LinuxEngines) for the Apple engine's calls,
                // and the tones, recordings and analysis of the media tests. On Linux the
                // ParleySDK product holds no ParleySDKApple (its dependency is iOS/macOS only).
                .product(name: "ParleySDK", package: "Parley"),
                .product(name: "ParleyMediaLegForMirrors", package: "Parley"),
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
