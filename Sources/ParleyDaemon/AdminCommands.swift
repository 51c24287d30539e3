import Foundation
import ParleyAuth
import ParleyStore

/// `parleyd app create|list|rotate-secret` (and, through their own files, `app push ...`,
/// `app show|set-cli|set-dialling` and `app callback ...`): application management straight on the store
/// (a connection of its own from `DaemonStores`), safe beside a running server (SQLite:
/// thanks to WAL and the busy timeout).
enum AdminCommands {
    /// A failure that is not the user's typing: the store, the disk. Exit status 1.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What `--json` prints for one application; secrets only when asked for (or just made).
    struct ApplicationJSON: Encodable, Equatable {
        var key: String
        var name: String
        var secret: String?
        var previousSecret: String?
        var previousSecretValidUntil: Int64?
        var createdTime: Int64
        var secretRotatedTime: Int64?

        init(_ application: Application, withSecrets: Bool) {
            key = application.key
            name = application.name
            createdTime = application.createdTime
            secretRotatedTime = application.secretRotatedTime
            previousSecretValidUntil = application.previousSecretValidUntil
            if withSecrets {
                secret = application.secret
                previousSecret = application.previousSecret
            }
        }
    }

    /// Runs `command` and returns what to print on standard output.
    static func run(_ command: DaemonCommand, now: Int64) throws -> String {
        switch command {
        case .appCreate(let options, let name):
            let store = try open(options, creating: true)
            let credentials: ApplicationCredentials
            do { credentials = try ApplicationCredentials.generate() } catch { throw Failure(description: "cannot generate credentials: \(error)") }
            let application = try storeCall { () throws(StoreError) in
                try store.createApplication(key: credentials.key, name: name, secret: credentials.secret.base64, at: now)
            }
            if options.json { return json(ApplicationJSON(application, withSecrets: true)) }
            return """
                created application "\(application.name)"
                key:    \(application.key)
                secret: \(application.secret)
                (the secret is shown in full only here and by app list --show-secrets; keep it on the backend)

                """
        case .appList(let options, let showSecrets):
            let store = try open(options, creating: false)
            let applications = try storeCall { () throws(StoreError) in try store.applications() }
            if options.json { return json(applications.map { ApplicationJSON($0, withSecrets: showSecrets) }) }
            guard !applications.isEmpty else { return "no applications (create one with: parleyd app create --data-dir \(options.dataDirectory))\n" }
            var out = ""
            for application in applications {
                out += "\(application.key)  \(application.name)  created \(iso8601(application.createdTime))"
                if let rotated = application.secretRotatedTime { out += "  rotated \(iso8601(rotated))" }
                if let until = application.previousSecretValidUntil, application.previousSecret != nil, until > now {
                    out += "  previous secret valid until \(iso8601(until))"
                }
                out += "\n"
                if showSecrets {
                    out += "    secret: \(application.secret)\n"
                    if let previous = application.previousSecret { out += "    previous secret: \(previous)\n" }
                }
            }
            return out
        case .appRotateSecret(let options, let key, let grace):
            let store = try open(options, creating: false)
            let secret: ApplicationSecret
            do { secret = try ApplicationSecret.generate() } catch { throw Failure(description: "cannot generate a secret: \(error)") }
            let application = try storeCall { () throws(StoreError) in
                try store.rotateSecret(key: key, newSecret: secret.base64, at: now, gracePeriodMilliseconds: grace * 1000)
            }
            if options.json { return json(ApplicationJSON(application, withSecrets: true)) }
            var out = "rotated the secret of \(application.key)\nsecret: \(application.secret)\n"
            if let until = application.previousSecretValidUntil, application.previousSecret != nil {
                out += "the previous secret stays valid until \(iso8601(until))\n"
            } else {
                out += "the previous secret is no longer valid\n"
            }
            return out
        case .appPush(let options, let push):
            return try PushAdminCommands.run(push, options: options, now: now)
        case .appDialling(let options, let dialling):
            return try DiallingAdminCommands.run(dialling, options: options, now: now)
        case .appCallback(let options, let callback):
            return try CallbackAdminCommands.run(callback, options: options, now: now)
        default:
            throw Failure(description: "not an app command")
        }
    }

    private static func open(_ options: AdminOptions, creating: Bool) throws -> any CallStore {
        try DaemonStores.administering(options.dataDirectory, creating: creating)
    }

    private static func storeCall<T>(_ body: () throws(StoreError) -> T) throws -> T {
        do { return try body() } catch { throw Failure(description: error.message) }
    }

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static func iso8601(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
