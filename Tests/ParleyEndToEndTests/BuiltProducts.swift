import Foundation

// Apart from ManagedProcess.swift, which AppleCheck's tests share (a symlink) with a
// BuiltProducts of their own: their bundle is not next to the root's executables.
/// Where the built executables are: next to the test bundle in the build directory.
enum BuiltProducts {
    static let directory: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("parley").path) } ?? candidates[0]
    }()

    static var parleyd: URL { directory.appendingPathComponent("parleyd") }
    static var parley: URL { directory.appendingPathComponent("parley") }
}
