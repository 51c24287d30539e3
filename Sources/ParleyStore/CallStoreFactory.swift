internal import Foundation

/// Opens connections to one store. Each owner of a connection (a `StoreQueue`, a
/// `StoreWriter`, a command-line tool) opens its own, so the factory, not a connection,
/// is what the composition root (parleyd's `serve`) hands to `ParleyServer`; choosing
/// another database is choosing another factory there.
///
/// ```swift
/// let stores = try CallStoreFactory.sqlite(dataDirectory: "/var/lib/parley")
/// let queue = try StoreQueue(opening: stores)
/// ```
public struct CallStoreFactory: Sendable, CustomStringConvertible {
    /// What a connection is for, so the adapter can set it up for that use.
    public enum Use: Sendable, Hashable {
        /// Requests one at a time from a `StoreQueue` or a tool, which may wait for a lock
        /// another connection holds (SQLite: a 5 s busy timeout).
        case requests
        /// A `StoreWriter`'s connection: a lock held elsewhere makes a transaction fail
        /// soon, so the writer backs off, retries and reports it instead of stalling
        /// silently (SQLite: a 1 s busy timeout).
        case writer
    }

    /// Which store, for logs: `sqlite:/var/lib/parley/parley.sqlite`.
    public let description: String
    private let opener: @Sendable (Use) throws(StoreError) -> any CallStore

    /// A factory whose `open(for:)` calls `opener`.
    public init(description: String, opener: @escaping @Sendable (Use) throws(StoreError) -> any CallStore) {
        self.description = description
        self.opener = opener
    }

    /// A new connection to the store, its schema brought up to date.
    public func open(for use: Use = .requests) throws(StoreError) -> any CallStore {
        try opener(use)
    }
}

extension CallStoreFactory {
    /// Connections to the SQLite file at `path` (created and migrated on first open).
    /// `writerBusyTimeoutMilliseconds` is how long a `.writer` connection waits for a lock
    /// before its transaction fails and is retried.
    public static func sqlite(
        path: String, durability: SQLiteStore.Durability = .processCrash, writerBusyTimeoutMilliseconds: Int = 1000
    ) -> CallStoreFactory {
        CallStoreFactory(description: "sqlite:" + path) { (use) throws(StoreError) -> any CallStore in
            switch use {
            case .requests: try SQLiteStore(path: path, durability: durability)
            case .writer: try SQLiteStore(path: path, durability: durability, busyTimeoutMilliseconds: writerBusyTimeoutMilliseconds)
            }
        }
    }

    /// Connections to `parley.sqlite` in `dataDirectory`, which is created (owner-only)
    /// when missing: the store parleyd uses by default.
    /// - Throws: `.database` when the directory cannot be created.
    public static func sqlite(
        dataDirectory: String, durability: SQLiteStore.Durability = .processCrash
    ) throws(StoreError) -> CallStoreFactory {
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.database, "cannot create data directory \(dataDirectory): \(error.localizedDescription)")
        }
        return sqlite(path: (dataDirectory as NSString).appendingPathComponent(SQLiteStore.defaultFileName), durability: durability)
    }
}
