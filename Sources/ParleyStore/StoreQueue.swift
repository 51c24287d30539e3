import Dispatch

/// A `SQLiteStore` behind a serial dispatch queue, for use from async code: blocking
/// SQLite work runs on the queue's thread, never on the cooperative pool, and one request
/// runs at a time.
///
/// ```swift
/// let store = try StoreQueue(path: dataDir + "/" + SQLiteStore.defaultFileName)
/// let known = try await store.perform { try $0.isKnownUser(applicationKey: key, userId: "bob") }
/// ```
///
/// The closure gets the store and must not let it escape.
public final class StoreQueue: @unchecked Sendable {
    // @unchecked: `store` is not Sendable; after init it is touched only inside
    // `queue.async`/`queue.sync` blocks of this serial queue, so never by two threads at once.
    private let store: SQLiteStore
    private let queue: DispatchQueue

    /// Opens the store (on the calling thread) and sets up its queue.
    public init(path: String, durability: SQLiteStore.Durability = .processCrash, label: String = "parley.store") throws(StoreError) {
        store = try SQLiteStore(path: path, durability: durability)
        queue = DispatchQueue(label: label)
    }

    /// Schema versions applied when the store opened.
    public var appliedMigrations: [Int64] { store.appliedMigrations }

    /// Runs `body` with the store on the queue and returns its result.
    public func perform<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteStore) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> T in try body(self.store) })
            }
        }
        return try result.get()
    }

    /// Runs `body` with the store on the queue, blocking the calling thread until it is
    /// done (for command-line tools and start-up; never from the queue itself).
    public func performAndWait<T>(_ body: (SQLiteStore) throws(StoreError) -> T) throws(StoreError) -> T {
        let result: Result<T, StoreError> = queue.sync { Result { () throws(StoreError) -> T in try body(store) } }
        return try result.get()
    }
}
