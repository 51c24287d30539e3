import Foundation
import ParleyStore

/// parleyd's choice of store, the one place in the product that names a store adapter:
/// SQLite, `parley.sqlite` in the data directory. `serve` and the admin commands both open
/// the store here, so another adapter (a database shared by several nodes) is one switch
/// in this file.
enum DaemonStores {
    /// The connections `serve` hands to `ParleyServer`, durability `processCrash`
    /// (docs/store.md, "Durability"). The data directory is created (owner-only) when missing.
    static func serving(_ dataDirectory: String) throws(StoreError) -> CallStoreFactory {
        try .sqlite(dataDirectory: dataDirectory)
    }

    /// A connection for an admin command, beside a running server or not: every change it
    /// makes waits for `fsync` (durability `powerLoss`), as application changes should.
    /// With `creating`, a missing data directory is created (owner-only) and the store with
    /// it; otherwise the store must exist.
    static func administering(_ dataDirectory: String, creating: Bool) throws -> any CallStore {
        let path = dataDirectory + "/" + SQLiteStore.defaultFileName
        if creating {
            do {
                try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw AdminCommands.Failure(description: "cannot create data directory \(dataDirectory): \((error as NSError).localizedDescription)")
            }
        } else if !FileManager.default.fileExists(atPath: path) {
            throw AdminCommands.Failure(description: "no store at \(path) (start parleyd or run parleyd app create with this --data-dir)")
        }
        do {
            return try CallStoreFactory.sqlite(path: path, durability: .powerLoss).open()
        } catch {
            throw AdminCommands.Failure(description: error.message)
        }
    }
}
