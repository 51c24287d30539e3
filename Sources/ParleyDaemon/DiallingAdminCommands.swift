import Foundation
import ParleyCallModel
import ParleyStore

/// `parleyd app set-cli|set-dialling|show KEY`: what an application may dial outside the
/// app (docs/calls.md, "Dialling policy"), straight on the store file like the other app
/// commands. A running server follows a change within its refresh interval (5 s).
enum DiallingAdminCommand: Equatable {
    /// `set-cli KEY +E164`, or `set-cli KEY --clear` (nil).
    case setCLI(applicationKey: String, cli: String?)
    /// `set-dialling KEY [--allow-prefix P]... [--clear-prefixes] [--max-concurrent N]
    /// [--max-per-minute N] [--max-duration SECONDS] [--sip on|off]`.
    case setDialling(applicationKey: String, DiallingChange)
    /// `show KEY`.
    case show(applicationKey: String)
}

/// What `set-dialling` changes; what it does not name stays as it is.
struct DiallingChange: Equatable {
    /// The new list of allowed prefixes (replacing the old one; empty with `--clear-prefixes`).
    var allowedNumberPrefixes: [String]?
    var maxConcurrentPhoneCalls: Int?
    var maxPhoneCallsPerMinute: Int?
    var maxCallDurationSeconds: Int?
    var allowsSIPAddresses: Bool?

    var isEmpty: Bool { self == DiallingChange() }

    func applied(to settings: DiallingSettings) -> DiallingSettings {
        var changed = settings
        if let allowedNumberPrefixes { changed.allowedNumberPrefixes = allowedNumberPrefixes }
        if let maxConcurrentPhoneCalls { changed.maxConcurrentPhoneCalls = maxConcurrentPhoneCalls }
        if let maxPhoneCallsPerMinute { changed.maxPhoneCallsPerMinute = maxPhoneCallsPerMinute }
        if let maxCallDurationSeconds { changed.maxCallDurationSeconds = maxCallDurationSeconds }
        if let allowsSIPAddresses { changed.allowsSIPAddresses = allowsSIPAddresses }
        return changed
    }
}

enum DiallingAdminCommands {
    /// The `app` subcommands parsed here.
    static let subcommands: Set<String> = ["set-cli", "set-dialling", "show"]

    static let usage = """
          app show KEY        name, creation time and dialling settings of KEY
          app set-cli KEY NUMBER
                              the CLI (E.164, e.g. +46812345678) KEY's phone calls present when
                              call.start gives none; --clear in place of NUMBER removes it
          app set-dialling KEY [options]
                              what KEY may dial (new applications dial nothing); options not
                              given stay as they are:
            --allow-prefix P  a number prefix (+ and digits, e.g. +46) phone calls may go to;
                              repeat it for several: they replace the allowed list
            --clear-prefixes  no phone numbers at all
            --max-concurrent N
                              calls to phone numbers in progress at once (0-100000; default 10)
            --max-per-minute N
                              calls to phone numbers placed in any 60 s (0-10000; default 30)
            --max-duration SECONDS
                              longest call to a phone or SIP address (1-604800; default 7200)
            --sip on|off      whether SIP addresses may be called (default off)
        """

    /// Parses the arguments from the subcommand on (the flags common to app commands,
    /// `--data-dir`, `--config` and `--json`, already taken out by the caller).
    static func parse(_ arguments: [String]) throws(DaemonUsageError) -> DiallingAdminCommand {
        guard let subcommand = arguments.first, subcommands.contains(subcommand) else {
            throw DaemonUsageError("not a dialling command: \(arguments.first ?? "none")")
        }
        var positional: [String] = []
        var change = DiallingChange()
        var prefixes: [String] = []
        var clearPrefixes = false
        var clearCLI = false
        var seen: Set<String> = []
        var index = 1
        func value(_ flag: String, _ inline: String?) throws(DaemonUsageError) -> String {
            if let inline, !inline.isEmpty { return inline }
            guard inline == nil, index < arguments.count, !arguments[index].isEmpty else {
                throw DaemonUsageError("--\(flag) needs a value")
            }
            index += 1
            return arguments[index - 1]
        }
        func once(_ flag: String) throws(DaemonUsageError) {
            guard seen.insert(flag).inserted else { throw DaemonUsageError("--\(flag) is given more than once") }
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var flag = String(argument.dropFirst(2))
            var inline: String?
            if let equals = flag.firstIndex(of: "=") {
                inline = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            switch (subcommand, flag) {
            case ("set-cli", "clear"):
                guard inline == nil else { throw DaemonUsageError("--clear takes no value") }
                try once(flag)
                clearCLI = true
            case ("set-dialling", "allow-prefix"):
                let prefix = try value(flag, inline)
                if let problem = DiallingSettings.prefixProblem(prefix) {
                    throw DaemonUsageError("--allow-prefix \(printable(prefix)) \(problem)")
                }
                guard !prefixes.contains(prefix) else { throw DaemonUsageError("--allow-prefix \(prefix) is given twice") }
                guard prefixes.count < DiallingSettings.maxPrefixCount else {
                    throw DaemonUsageError("at most \(DiallingSettings.maxPrefixCount) --allow-prefix")
                }
                prefixes.append(prefix)
            case ("set-dialling", "clear-prefixes"):
                guard inline == nil else { throw DaemonUsageError("--clear-prefixes takes no value") }
                try once(flag)
                clearPrefixes = true
            case ("set-dialling", "max-concurrent"):
                try once(flag)
                change.maxConcurrentPhoneCalls = try integer(try value(flag, inline), flag, DiallingSettings.concurrentPhoneCallsRange)
            case ("set-dialling", "max-per-minute"):
                try once(flag)
                change.maxPhoneCallsPerMinute = try integer(try value(flag, inline), flag, DiallingSettings.phoneCallsPerMinuteRange)
            case ("set-dialling", "max-duration"):
                try once(flag)
                change.maxCallDurationSeconds = try integer(try value(flag, inline), flag, DiallingSettings.callDurationSecondsRange)
            case ("set-dialling", "sip"):
                try once(flag)
                switch try value(flag, inline) {
                case "on": change.allowsSIPAddresses = true
                case "off": change.allowsSIPAddresses = false
                case let other: throw DaemonUsageError("--sip \(printable(other)): expected on or off")
                }
            default:
                throw DaemonUsageError("unknown flag --\(printable(flag)) for parleyd app \(subcommand) (see parleyd --help)")
            }
        }
        guard let key = positional.first else { throw DaemonUsageError("parleyd app \(subcommand) needs the application KEY") }
        switch subcommand {
        case "set-cli":
            if clearCLI {
                guard positional.count == 1 else { throw DaemonUsageError("parleyd app set-cli takes KEY and --clear, not a NUMBER too") }
                return .setCLI(applicationKey: key, cli: nil)
            }
            guard positional.count == 2 else {
                throw DaemonUsageError("parleyd app set-cli takes KEY and one NUMBER (or --clear), not \(positional.count - 1) numbers")
            }
            let cli = positional[1]
            if let problem = DiallingSettings.numberProblem(cli) { throw DaemonUsageError("CLI \(printable(cli)) \(problem)") }
            return .setCLI(applicationKey: key, cli: cli)
        case "set-dialling":
            guard positional.count == 1 else { throw DaemonUsageError("parleyd app set-dialling takes one KEY, not \(positional.count)") }
            if clearPrefixes, !prefixes.isEmpty {
                throw DaemonUsageError("--clear-prefixes and --allow-prefix contradict each other")
            }
            if clearPrefixes || !prefixes.isEmpty { change.allowedNumberPrefixes = prefixes }
            guard !change.isEmpty else {
                throw DaemonUsageError("parleyd app set-dialling needs something to change (see parleyd --help)")
            }
            return .setDialling(applicationKey: key, change)
        default:
            guard positional.count == 1 else { throw DaemonUsageError("parleyd app show takes one KEY, not \(positional.count)") }
            return .show(applicationKey: key)
        }
    }

    /// What `--json` prints: the application and its settings (`defaultCLI` absent when none).
    struct ShowJSON: Encodable, Equatable {
        var key: String
        var name: String
        var createdTime: Int64
        var dialling: DiallingSettings
    }

    /// Runs the command on the store in `options.dataDirectory`; returns what to print.
    static func run(_ command: DiallingAdminCommand, options: AdminOptions, now: Int64) throws -> String {
        let store = try DaemonStores.administering(options.dataDirectory, creating: false)
        let application: Application
        var done: String?
        switch command {
        case .show(let key):
            guard let found = try call({ () throws(StoreError) in try store.application(key: key) }) else {
                throw AdminCommands.Failure(description: "no application \(key) (see parleyd app list)")
            }
            application = found
        case .setCLI(let key, let cli):
            application = try change(key, in: store) { $0.defaultCLI = cli }
            done = cli.map { "set the default CLI of \(key) to \($0)" } ?? "removed the default CLI of \(key)"
        case .setDialling(let key, let change):
            application = try self.change(key, in: store) { $0 = change.applied(to: $0) }
            done = "changed the dialling settings of \(key)"
        }
        if options.json {
            return AdminCommands.json(ShowJSON(key: application.key, name: application.name, createdTime: application.createdTime,
                                               dialling: application.dialling))
        }
        return (done.map { $0 + "\n" } ?? "") + text(application)
    }

    /// The text form of `show`.
    static func text(_ application: Application) -> String {
        let settings = application.dialling
        let prefixes = settings.allowedNumberPrefixes.isEmpty
            ? "none (no phone numbers)" : settings.allowedNumberPrefixes.joined(separator: " ")
        return """
            application \(application.key)  \(application.name)  created \(AdminCommands.iso8601(application.createdTime))
              default CLI:             \(settings.defaultCLI ?? "none (call.start must give cli)")
              allowed number prefixes: \(prefixes)
              concurrent phone calls:  at most \(settings.maxConcurrentPhoneCalls)
              phone calls per minute:  at most \(settings.maxPhoneCallsPerMinute)
              longest call:            \(settings.maxCallDurationSeconds) s (phone numbers and SIP addresses)
              SIP addresses:           \(settings.allowsSIPAddresses ? "allowed" : "not allowed")

            """
    }

    /// Reads the application's settings, changes them and writes them back in one
    /// transaction, so two commands at once do not lose each other's change.
    private static func change(_ key: String, in store: any CallStore, _ body: (inout DiallingSettings) -> Void) throws -> Application {
        try call { () throws(StoreError) in
            try store.transaction(durable: true) { (store) throws(StoreError) -> Application in
                guard var settings = try store.application(key: key)?.dialling else {
                    throw StoreError(.notFound, "no application \(key) (see parleyd app list)")
                }
                body(&settings)
                return try store.setDiallingSettings(applicationKey: key, settings)
            }
        }
    }

    private static func integer(_ text: String, _ flag: String, _ range: ClosedRange<Int>) throws(DaemonUsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw DaemonUsageError("--\(flag) \(printable(text)): expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Command-line text in an error message: at most 40 characters, controls as `?`.
    private static func printable(_ text: String) -> String {
        String(text.prefix(40).map { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 ? "?" : $0 })
    }

    private static func call<T>(_ body: () throws(StoreError) -> T) throws -> T {
        do { return try body() } catch { throw AdminCommands.Failure(description: error.message) }
    }
}
