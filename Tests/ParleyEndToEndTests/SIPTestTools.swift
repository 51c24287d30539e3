import Foundation

/// Where the SIP tests' peers and scripts are: the repository (for scripts/sipp and
/// scripts/kamailio) and the `sipp` executable. Also linked into AppleCheck's tests, so
/// the repository is found by walking up from this file to the directory holding
/// `scripts/sipp`, whichever path it was compiled from.
enum SIPTestTools {
    static let repository: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("scripts/sipp").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    static func sipp() throws -> URL {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("sipp") }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ManagedProcess.Failure(description: "sipp is not installed: scripts/install-deps.sh installs it (Debian's sip-tester)")
        }
        return found
    }
}
