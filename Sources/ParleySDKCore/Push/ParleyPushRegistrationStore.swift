public import Foundation

/// Where the client keeps its push registration between launches. Called from the
/// client's work queue; implementations must be thread-safe.
public protocol ParleyPushRegistrationStore: AnyObject, Sendable {
    /// The stored registration, if any.
    func load() -> ParleyPushRegistration?
    /// Replaces the stored registration (`nil` removes it).
    func save(_ registration: ParleyPushRegistration?)
}

/// Keeps the registration in memory only: pushes received after a relaunch cannot be
/// verified. For tests and tools.
public final class InMemoryPushRegistrationStore: ParleyPushRegistrationStore {
    private let value = Locked<ParleyPushRegistration?>(nil)

    /// An empty store.
    public init() {}

    public func load() -> ParleyPushRegistration? { value.current }
    public func save(_ registration: ParleyPushRegistration?) { value.withLock { $0 = registration } }
}

/// Keeps the registration in a JSON file (written atomically, readable by this user
/// only), e.g. in Application Support. The file holds the push key: keep it out of
/// backups the user does not control (`isExcludedFromBackup` on Apple platforms).
public final class FilePushRegistrationStore: ParleyPushRegistrationStore {
    /// The file.
    public let url: URL
    private let lock = NSLock()

    /// A store at `url`; its directory is created on the first save.
    public init(url: URL) { self.url = url }

    /// The default place: `<Application Support>/Parley/push-<deviceId>.json`.
    public static func defaultStore(deviceId: String) -> FilePushRegistrationStore {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory())
        return FilePushRegistrationStore(url: base.appendingPathComponent("Parley").appendingPathComponent("push-\(deviceId).json"))
    }

    public func load() -> ParleyPushRegistration? {
        lock.lock()
        defer { lock.unlock() }
        // A missing or damaged file means no registration: the next register replaces it.
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(ParleyPushRegistration.self, from: data)
    }

    public func save(_ registration: ParleyPushRegistration?) {
        lock.lock()
        defer { lock.unlock() }
        guard let registration else {
            try? FileManager.default.removeItem(at: url)
            return
        }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let data = try JSONEncoder().encode(registration)
            try data.write(to: url, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        } catch {
            // Not fatal: pushes then fail local verification until the next registration.
        }
    }
}
