import Foundation
import ParleyStore

/// `parleyd app callback set|show|clear KEY`: where an application's backend is called
/// back (issue 12; docs/operations.md, "Callbacks and numbers"), straight on the store file
/// like the other app commands. A running server follows a change within its refresh
/// interval (ParleyServer's `CallbackSettingsSource`, 5 s).
enum CallbackAdminCommand: Equatable {
    /// `set KEY URL [--timeout-ms N] [--events LIST] [--app-calls] [--ca-file PATH]`: the
    /// whole settings, what is not given at its default.
    case set(applicationKey: String, CallbackSettings)
    /// `show KEY`.
    case show(applicationKey: String)
    /// `clear KEY`: no more callbacks.
    case clear(applicationKey: String)
}

enum CallbackAdminCommands {
    static let usage = """
          app callback set KEY URL [options]
                              call KEY's backend back at URL (http:// or https://) for calls
                              from SIP trunks and peers; options not given take their defaults:
            --timeout-ms N    how long to wait for the backend's answer (100-30000; default 3000)
            --events LIST     which events to send, comma-separated (default ice,ace,dice,pie,notify)
            --app-calls       calls placed from the app ask the backend too (default: they do not)
            --ca-file PATH    PEM CA certificates the backend's certificate must chain to,
                              instead of the system's (an absolute path; https:// only)
          app callback show KEY
                              KEY's callback settings
          app callback clear KEY
                              no more callbacks: KEY's numbers follow their --sip-number rules
        """

    /// Parses the arguments after `app callback` (the flags common to app commands,
    /// `--data-dir`, `--config` and `--json`, already taken out by the caller).
    static func parse(_ arguments: [String]) throws(DaemonUsageError) -> CallbackAdminCommand {
        guard let subcommand = arguments.first else {
            throw DaemonUsageError("parleyd app callback needs a command: set, show or clear")
        }
        let allowed: [String: Set<String>] = ["set": ["timeout-ms", "events", "app-calls", "ca-file"], "show": [], "clear": []]
        guard let flags = allowed[subcommand] else {
            throw DaemonUsageError("unknown app callback command \"\(printable(subcommand))\" (set, show, clear)")
        }
        var values: [String: String] = [:]
        var positional: [String] = []
        var index = 1
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
            guard flags.contains(flag) else {
                throw DaemonUsageError("unknown flag --\(printable(flag)) for parleyd app callback \(subcommand) (see parleyd --help)")
            }
            guard values[flag] == nil else { throw DaemonUsageError("--\(flag) is given more than once") }
            if flag == "app-calls" {
                guard value == nil else { throw DaemonUsageError("--app-calls takes no value") }
                values[flag] = ""
                continue
            }
            if value == nil {
                guard index < arguments.count else { throw DaemonUsageError("--\(flag) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard let value, !value.isEmpty else { throw DaemonUsageError("--\(flag) needs a value") }
            values[flag] = value
        }
        let expected = subcommand == "set" ? 2 : 1
        guard positional.count == expected else {
            if positional.isEmpty { throw DaemonUsageError("parleyd app callback \(subcommand) needs the application KEY") }
            if subcommand == "set" {
                throw DaemonUsageError(positional.count == 1 ? "parleyd app callback set needs the callback URL after KEY"
                                                             : "parleyd app callback set takes KEY and one URL, not \(positional.count - 1) URLs")
            }
            throw DaemonUsageError("parleyd app callback \(subcommand) takes one KEY, not \(positional.count)")
        }
        let key = positional[0]
        switch subcommand {
        case "set":
            return .set(applicationKey: key, try settings(url: positional[1], values))
        case "show":
            return .show(applicationKey: key)
        default:
            return .clear(applicationKey: key)
        }
    }

    private static func settings(url: String, _ values: [String: String]) throws(DaemonUsageError) -> CallbackSettings {
        if let problem = CallbackSettings.urlProblem(url) {
            throw DaemonUsageError("callback URL \"\(printable(url))\" \(problem)")
        }
        var settings = CallbackSettings(url: url, appCalls: values["app-calls"] != nil)
        if let text = values["timeout-ms"] {
            let range = CallbackSettings.timeoutMillisecondsRange
            guard text.utf8.count <= 6, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text),
                  range.contains(value) else {
                throw DaemonUsageError("--timeout-ms \(printable(text)): expected a whole number of milliseconds from \(range.lowerBound) to \(range.upperBound)")
            }
            settings.timeoutMilliseconds = value
        }
        if let text = values["events"] {
            switch CallbackSettings.events(parsing: text) {
            case .success(let events): settings.events = events
            case .failure(let problem): throw DaemonUsageError("--events: \(problem)")
            }
        }
        if let path = values["ca-file"] {
            if let problem = CallbackSettings.caFileProblem(path) { throw DaemonUsageError("--ca-file \(problem)") }
            // The server reads the file from its own working directory, not this one.
            guard path.hasPrefix("/") else {
                throw DaemonUsageError("--ca-file \(printable(path)): give an absolute path (the server reads it, not this command)")
            }
            guard CallbackSettings.isHTTPS(url) else { throw DaemonUsageError("--ca-file needs an https:// callback URL") }
            settings.caFile = path
        }
        if let problem = settings.problem { throw DaemonUsageError("callback settings: \(problem)") }
        return settings
    }

    /// What `--json` prints: the application and its settings (`callback` null when none).
    struct ShowJSON: Encodable, Equatable {
        var key: String
        var name: String
        var callback: CallbackSettings?

        private enum CodingKeys: String, CodingKey { case key, name, callback }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(key, forKey: .key)
            try container.encode(name, forKey: .name)
            try container.encode(callback, forKey: .callback)
        }
    }

    /// The largest CA file `set` reads to check it.
    static let maxCAFileBytes = 1 << 20

    /// Runs the command on the store in `options.dataDirectory`; returns what to print.
    static func run(_ command: CallbackAdminCommand, options: AdminOptions, now: Int64) throws -> String {
        let store = try DaemonStores.administering(options.dataDirectory, creating: false)
        let key: String
        switch command {
        case .set(let applicationKey, _), .show(let applicationKey), .clear(let applicationKey): key = applicationKey
        }
        if case .set(_, let settings) = command, let caFile = settings.caFile { try checkCAFile(caFile) }
        guard let application = try call({ () throws(StoreError) in try store.application(key: key) }) else {
            throw AdminCommands.Failure(description: "no application \(key) (see parleyd app list)")
        }
        var done: String?
        switch command {
        case .set(_, let settings):
            try call { () throws(StoreError) in try store.setCallbackSettings(applicationKey: key, settings, at: now) }
            done = "set the callback settings of \(key)"
        case .show:
            break
        case .clear:
            let had = try call { () throws(StoreError) in try store.clearCallbackSettings(applicationKey: key) }
            done = had ? "removed the callback settings of \(key)" : "\(key) had no callback settings"
        }
        let settings = try call { () throws(StoreError) in try store.callbackSettings(applicationKey: key) }
        if options.json {
            return AdminCommands.json(ShowJSON(key: key, name: application.name, callback: settings))
        }
        return (done.map { $0 + "\n" } ?? "") + text(application, settings)
    }

    /// The text form of `show`.
    static func text(_ application: Application, _ settings: CallbackSettings?) -> String {
        var out = "application \(application.key)  \(application.name)\n"
        guard let settings else {
            return out + "  callback URL: none (no callbacks; calls to its numbers follow their --sip-number rules)\n"
        }
        out += """
              callback URL: \(settings.url)
              CA file:      \(settings.caFile ?? "none (the system's CAs)")
              timeout:      \(settings.timeoutMilliseconds) ms
              events:       \(settings.orderedEvents.map(\.rawValue).joined(separator: " "))
              app calls:    \(settings.appCalls ? "ask the backend" : "routed without the backend")

            """
        return out
    }

    /// Refuses a CA file the server could not use: missing, unreadable, too large, or
    /// without a PEM certificate.
    private static func checkCAFile(_ path: String) throws {
        guard let data = FileManager.default.contents(atPath: path), data.count <= maxCAFileBytes else {
            throw AdminCommands.Failure(description: "cannot read CA file \(path) (missing, unreadable or over 1 MiB)")
        }
        guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw AdminCommands.Failure(description: "CA file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
    }

    /// Command-line text in an error message: at most 60 characters, controls as `?`.
    private static func printable(_ text: String) -> String {
        String(text.prefix(60).map { $0.isASCII && (($0.asciiValue ?? 0) < 0x20 || $0.asciiValue == 0x7F) ? "?" : $0 })
    }

    private static func call<T>(_ body: () throws(StoreError) -> T) throws -> T {
        do { return try body() } catch { throw AdminCommands.Failure(description: error.message) }
    }
}
