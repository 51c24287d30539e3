@_spi(ParleyEngines) import ParleySDKCore
import Foundation

/// Sound files already converted to 48 kHz mono, so playing the same file again (a
/// ringback tone on every call) costs nothing. Keyed by path, size and modification
/// time, so an edited file is read again. Holds at most `maximumSamples` in all (about
/// 16 s per million samples), dropping the oldest first.
final class SoundFileCache: Sendable {
    /// A file as it is on disk now.
    struct Key: Hashable, Sendable {
        var path: String
        var size: Int
        var modified: Double

        /// The file's current key; nil if it cannot be looked at (then it is read anyway
        /// and not cached, and reading reports why).
        init?(path: String) {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  let size = (attributes[.size] as? NSNumber)?.intValue,
                  let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 else { return nil }
            self.path = path
            self.size = size
            self.modified = modified
        }
    }

    static let maximumSamples = 8 * 1024 * 1024

    private let entries = Locked<[(key: Key, samples: [Int16])]>([])

    func samples(for key: Key) -> [Int16]? {
        entries.current.last { $0.key == key }?.samples
    }

    func insert(_ samples: [Int16], for key: Key) {
        guard samples.count <= Self.maximumSamples else { return }
        entries.withLock { entries in
            entries.removeAll { $0.key.path == key.path }
            entries.append((key, samples))
            while entries.reduce(0, { $0 + $1.samples.count }) > Self.maximumSamples { entries.removeFirst() }
        }
    }
}
