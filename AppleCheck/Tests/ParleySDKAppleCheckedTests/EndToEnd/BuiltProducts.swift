import Foundation

/// The root package's `parleyd` and `parley`, which `make apple-check` finds built (it
/// runs after `make build`): in the root's debug build directory, found from this file.
enum BuiltProducts {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // EndToEnd
        .deletingLastPathComponent()  // ParleySDKAppleCheckedTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // AppleCheck
        .deletingLastPathComponent()  // the root package
        .appendingPathComponent(".build/debug")

    static var parleyd: URL { directory.appendingPathComponent("parleyd") }
    static var parley: URL { directory.appendingPathComponent("parley") }
}
