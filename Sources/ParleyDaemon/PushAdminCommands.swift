import Foundation
import ParleyPush
import ParleyStore

/// `parleyd app push set-apns|set-fcm|show KEY`: an application's push credentials
/// (docs/push.md), straight on the store file like the other app commands.
enum PushAdminCommand: Equatable {
    /// `set-apns KEY --team-id T --key-id K --p8 FILE`.
    case setAPNs(applicationKey: String, teamID: String, keyID: String, p8Path: String)
    /// `set-fcm KEY --service-account FILE`.
    case setFCM(applicationKey: String, serviceAccountPath: String)
    /// `show KEY`.
    case show(applicationKey: String)
}

enum PushAdminCommands {
    static let usage = """
          app push set-apns KEY --team-id TEAM --key-id KID --p8 FILE
                              APNs token authentication for KEY (the .p8 key Apple issued)
          app push set-fcm KEY --service-account FILE
                              FCM HTTP v1 for KEY (the Firebase service-account JSON file)
          app push show KEY   which push credentials KEY has (never the private keys)

        """

    /// Parses the arguments after `app push` (flags common to app commands already taken
    /// out by the caller: `--data-dir`, `--config`, `--json`).
    static func parse(_ arguments: [String]) throws(DaemonUsageError) -> PushAdminCommand {
        guard let subcommand = arguments.first else {
            throw DaemonUsageError("parleyd app push needs a command: set-apns, set-fcm or show")
        }
        var values: [String: String] = [:]
        var positional: [String] = []
        var index = 1
        let allowed: [String: Set<String>] = ["set-apns": ["team-id", "key-id", "p8"], "set-fcm": ["service-account"], "show": []]
        guard let flags = allowed[subcommand] else {
            throw DaemonUsageError("unknown app push command \"\(subcommand)\" (set-apns, set-fcm, show)")
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var flag = String(argument.dropFirst(2))
            var value: String?
            if let equals = flag.firstIndex(of: "=") {
                value = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            guard flags.contains(flag) else { throw DaemonUsageError("unknown flag --\(flag) for parleyd app push \(subcommand)") }
            guard values[flag] == nil else { throw DaemonUsageError("--\(flag) is given more than once") }
            if value == nil {
                guard index < arguments.count else { throw DaemonUsageError("--\(flag) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard let value, !value.isEmpty else { throw DaemonUsageError("--\(flag) needs a value") }
            values[flag] = value
        }
        guard positional.count == 1 else {
            throw DaemonUsageError(positional.isEmpty ? "parleyd app push \(subcommand) needs the application KEY"
                                                      : "parleyd app push \(subcommand) takes one KEY, not \(positional.count)")
        }
        for flag in flags.sorted() where values[flag] == nil {
            throw DaemonUsageError("parleyd app push \(subcommand) needs --\(flag)")
        }
        switch subcommand {
        case "set-apns":
            return .setAPNs(applicationKey: positional[0], teamID: values["team-id"]!, keyID: values["key-id"]!, p8Path: values["p8"]!)
        case "set-fcm":
            return .setFCM(applicationKey: positional[0], serviceAccountPath: values["service-account"]!)
        default:
            return .show(applicationKey: positional[0])
        }
    }

    struct ShowJSON: Encodable, Equatable {
        struct APNs: Encodable, Equatable { var teamId: String; var keyId: String; var updatedTime: Int64 }
        struct FCM: Encodable, Equatable { var projectId: String; var clientEmail: String; var tokenUri: String; var updatedTime: Int64 }
        var key: String
        var apns: APNs?
        var fcm: FCM?
    }

    /// Runs the command on the store in `options.dataDirectory`; returns what to print.
    static func run(_ command: PushAdminCommand, options: AdminOptions, now: Int64) throws -> String {
        let store = try DaemonStores.administering(options.dataDirectory, creating: false)
        switch command {
        case .setAPNs(let key, let teamID, let keyID, let p8Path):
            let credentials: APNsCredentials
            do {
                credentials = try APNsCredentials(teamID: teamID, keyID: keyID, privateKeyPEM: try read(p8Path))
            } catch let error as PushError {
                throw AdminCommands.Failure(description: error.detail)
            }
            try requireApplication(key, store)
            try call { () throws(StoreError) in
                try store.setPushCredentials(StoredPushCredentials(applicationKey: key, provider: .apns, settings: credentials.settingsJSON, updatedTime: now))
            }
            return options.json ? AdminCommands.json(try show(key, store)) : "set APNs credentials of \(key): team \(teamID), key \(keyID)\n"
        case .setFCM(let key, let accountPath):
            let text = try read(accountPath)
            let credentials: FCMCredentials
            do { credentials = try FCMCredentials(serviceAccountJSON: text) } catch {
                throw AdminCommands.Failure(description: error.detail)
            }
            try requireApplication(key, store)
            try call { () throws(StoreError) in
                try store.setPushCredentials(StoredPushCredentials(applicationKey: key, provider: .fcm, settings: text, updatedTime: now))
            }
            return options.json ? AdminCommands.json(try show(key, store))
                : "set FCM credentials of \(key): project \(credentials.projectID), \(credentials.clientEmail)\n"
        case .show(let key):
            try requireApplication(key, store)
            let shown = try show(key, store)
            if options.json { return AdminCommands.json(shown) }
            var out = "push credentials of \(key)\n"
            if let apns = shown.apns {
                out += "  apns: team \(apns.teamId), key \(apns.keyId), set \(AdminCommands.iso8601(apns.updatedTime))\n"
            } else {
                out += "  apns: not set (parleyd app push set-apns)\n"
            }
            if let fcm = shown.fcm {
                out += "  fcm:  project \(fcm.projectId), \(fcm.clientEmail), set \(AdminCommands.iso8601(fcm.updatedTime))\n"
            } else {
                out += "  fcm:  not set (parleyd app push set-fcm)\n"
            }
            return out
        }
    }

    private static func show(_ key: String, _ store: any CallStore) throws -> ShowJSON {
        var shown = ShowJSON(key: key)
        for stored in try call({ () throws(StoreError) in try store.pushCredentials(applicationKey: key) }) {
            switch stored.provider {
            case .apns:
                if let credentials = try? APNsCredentials(settingsJSON: stored.settings) {
                    shown.apns = .init(teamId: credentials.teamID, keyId: credentials.keyID, updatedTime: stored.updatedTime)
                }
            case .fcm:
                if let credentials = try? FCMCredentials(serviceAccountJSON: stored.settings) {
                    shown.fcm = .init(projectId: credentials.projectID, clientEmail: credentials.clientEmail,
                                      tokenUri: credentials.tokenURI, updatedTime: stored.updatedTime)
                }
            }
        }
        return shown
    }

    private static func requireApplication(_ key: String, _ store: any CallStore) throws {
        guard try call({ () throws(StoreError) in try store.application(key: key) }) != nil else {
            throw AdminCommands.Failure(description: "no application \(key) (see parleyd app list)")
        }
    }

    private static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
            throw AdminCommands.Failure(description: "cannot read \(path) (missing, unreadable or over 1 MiB)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func call<T>(_ body: () throws(StoreError) -> T) throws -> T {
        do { return try body() } catch { throw AdminCommands.Failure(description: error.message) }
    }
}
