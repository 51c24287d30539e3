import Dispatch

/// A store connection behind a serial dispatch queue, for use from async code and from
/// threads that must not run the store's blocking work themselves: the work runs on the
/// queue's thread, never on the cooperative pool, and one request runs at a time.
///
/// ```swift
/// let store = try StoreQueue(opening: stores)          // a CallStoreFactory
/// let known = try await store.perform { try $0.isKnownUser(applicationKey: key, userId: "bob") }
/// ```
///
/// The closure gets the store and must not let it escape.
public final class StoreQueue: @unchecked Sendable {
    // @unchecked: `store` is not Sendable; after init it is touched only inside
    // `queue.async`/`queue.sync` blocks of this serial queue, so never by two threads at once.
    private let store: any CallStore
    private let queue: DispatchQueue

    /// Takes over `store` (a connection nobody else uses) and sets up its queue.
    public init(_ store: sending any CallStore, label: String = "parley.store") {
        self.store = store
        queue = DispatchQueue(label: label)
    }

    /// Opens a connection of its own through `factory` (on the calling thread).
    public convenience init(opening factory: CallStoreFactory, label: String = "parley.store") throws(StoreError) {
        self.init(try factory.open(for: .requests), label: label)
    }

    /// Opens the SQLite store at `path` (a shortcut for tests and tools that name a file).
    public convenience init(path: String, durability: SQLiteStore.Durability = .processCrash, label: String = "parley.store") throws(StoreError) {
        self.init(try SQLiteStore(path: path, durability: durability), label: label)
    }

    /// Schema versions applied when the store opened.
    public var appliedMigrations: [Int64] { queue.sync { store.appliedMigrations } }

    /// Runs `body` with the store on the queue and returns its result.
    public func perform<T: Sendable>(
        _ body: @escaping @Sendable (any CallStore) throws(StoreError) -> T
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
    public func performAndWait<T>(_ body: (any CallStore) throws(StoreError) -> T) throws(StoreError) -> T {
        let result: Result<T, StoreError> = queue.sync { Result { () throws(StoreError) -> T in try body(store) } }
        return try result.get()
    }
}
