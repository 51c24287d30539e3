import ParleyWireCore
import Foundation
import ParleyNetCore
import ParleyServer

/// What `parleyd` was asked to do.
enum DaemonCommand: Equatable {
    /// Run the server (the default command).
    case serve(ServerConfiguration)
    /// Print the usage and exit 0.
    case help
    /// Print the version and exit 0.
    case version
    /// `parleyd app create [--name N]`.
    case appCreate(AdminOptions, name: String)
    /// `parleyd app list [--show-secrets]`.
    case appList(AdminOptions, showSecrets: Bool)
    /// `parleyd app rotate-secret KEY [--grace SECONDS]`.
    case appRotateSecret(AdminOptions, key: String, gracePeriodSeconds: Int64)
    /// `parleyd app push set-apns|set-fcm|show KEY ...` (PushAdminCommands).
    case appPush(AdminOptions, PushAdminCommand)
    /// `parleyd app show|set-cli|set-dialling KEY ...` (DiallingAdminCommands).
    case appDialling(AdminOptions, DiallingAdminCommand)
    /// `parleyd app callback set|show|clear KEY ...` (CallbackAdminCommands).
    case appCallback(AdminOptions, CallbackAdminCommand)
}

/// What every `parleyd app` command takes.
struct AdminOptions: Equatable {
    var dataDirectory: String
    /// Print JSON instead of text.
    var json: Bool
}

/// A command line, environment or configuration file `parleyd` cannot use: one line for
/// standard error, and exit status 2.
struct DaemonUsageError: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Turns arguments, environment and the configuration file into a `DaemonCommand`.
///
/// A pure function of its inputs (the file is read through `readFile`), so every rule is
/// tested without a process. Precedence, per setting: flags, then `PARLEY_*` environment
/// variables, then the JSON file (`--config FILE` or `PARLEY_CONFIG`), then the defaults.
enum DaemonCommandLine {
    /// Default rotation grace period of `app rotate-secret`: one day.
    static let defaultGracePeriodSeconds: Int64 = 86_400
    static let defaultDataDirectory = "./.parley"

    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - readFile: the text of the file at a path, or throws.
    static func parse(arguments: [String], environment: [String: String],
                      readFile: (String) throws -> String) -> Result<DaemonCommand, DaemonUsageError> {
        do {
            return .success(try command(arguments, environment, readFile))
        } catch let error as DaemonUsageError {
            return .failure(error)
        } catch {
            return .failure(DaemonUsageError("\(error)"))
        }
    }

    private static func command(_ arguments: [String], _ environment: [String: String],
                                _ readFile: (String) throws -> String) throws -> DaemonCommand {
        switch arguments.first {
        case "serve"?: return try serve(Array(arguments.dropFirst()), environment, readFile)
        case "app"?: return try app(Array(arguments.dropFirst()), environment, readFile)
        case "help"?, "-h"?: return .help
        default: return try serve(arguments, environment, readFile)
        }
    }

    // MARK: serve

    private static func serve(_ arguments: [String], _ environment: [String: String],
                              _ readFile: (String) throws -> String) throws -> DaemonCommand {
        var flags = SettingValues()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw DaemonUsageError("unexpected argument \"\(argument)\" (see parleyd --help)")
            }
            let (name, inline) = splitFlag(argument)
            switch name {
            case "help": return .help
            case "version": return .version
            default: break
            }
            guard let option = ConfigurationOption.named(name) else {
                throw DaemonUsageError("unknown flag --\(name) (see parleyd --help)")
            }
            let value: String
            if option.kind == .switchOn {
                guard inline == nil else { throw DaemonUsageError("--\(name) takes no value") }
                value = "true"
            } else if let inline {
                value = inline
            } else {
                guard index < arguments.count else {
                    throw DaemonUsageError("--\(name) needs a value (\(option.valueName))")
                }
                value = arguments[index]
                index += 1
            }
            if option.kind != .list, flags[option.name] != nil {
                throw DaemonUsageError("--\(name) is given more than once")
            }
            flags[option.name, default: Setting(source: option.flag, values: [])].values.append(value)
        }
        let settings = try mergedSettings(flags: flags, environment, readFile)
        return .serve(try configuration(from: settings, readFile: readFile))
    }

    /// `--name=value` into its name and value; `--name` into the name and nil.
    private static func splitFlag(_ argument: String) -> (String, String?) {
        let body = argument.dropFirst(2)
        guard let equals = body.firstIndex(of: "=") else { return (String(body), nil) }
        return (String(body[..<equals]), String(body[body.index(after: equals)...]))
    }

    /// Where one setting's winning values came from (a flag, a variable, a file key), for
    /// error messages.
    struct Setting: Equatable {
        var source: String
        var values: [String]
    }

    typealias SettingValues = [String: Setting]

    private static func mergedSettings(flags: SettingValues, _ environment: [String: String],
                                       _ readFile: (String) throws -> String) throws -> SettingValues {
        let variables = environmentSettings(environment)
        var file = SettingValues()
        if let config = flags["config"] ?? variables["config"] {
            file = try fileSettings(path: config.values[0], readFile)
        }
        var merged = file
        for (name, setting) in variables { merged[name] = setting }
        for (name, setting) in flags { merged[name] = setting }
        return merged
    }

    private static func environmentSettings(_ environment: [String: String]) -> SettingValues {
        var settings = SettingValues()
        for option in ConfigurationOption.all {
            // An empty variable counts as unset (`PARLEY_X= parleyd` clears an exported one).
            guard let text = environment[option.environmentName], !text.isEmpty else { continue }
            let values = option.kind == .list
                ? text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                : [text]
            settings[option.name] = Setting(source: option.environmentName, values: values)
        }
        return settings
    }

    /// The JSON file's settings as option values: one object, known keys only.
    static func fileSettings(path: String, _ readFile: (String) throws -> String) throws -> SettingValues {
        let text: String
        do {
            text = try readFile(path)
        } catch {
            throw DaemonUsageError("cannot read configuration file \(path): \(Self.reason(error))")
        }
        let object: [String: JSONValue]
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
        } catch {
            throw DaemonUsageError("configuration file \(path) is not a JSON object: \(Self.reason(error))")
        }
        var settings = SettingValues()
        for key in object.keys.sorted() {
            guard let option = ConfigurationOption.all.first(where: { $0.jsonKey == key && $0.inFile }) else {
                throw DaemonUsageError("unknown key \"\(key)\" in configuration file \(path) (see parleyd --help)")
            }
            let source = "\"\(key)\" in \(path)"
            settings[option.name] = Setting(source: source, values: try object[key]!.optionValues(for: option, source: source))
        }
        return settings
    }

    private static func reason(_ error: any Error) -> String {
        if let decoding = error as? DecodingError {
            switch decoding {
            case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
                return context.underlyingError.map { "\($0.localizedDescription)" } ?? context.debugDescription
            @unknown default: return "\(decoding)"
            }
        }
        if let cocoa = error as? CocoaError { return cocoa.localizedDescription }
        return "\(error)"
    }

    // MARK: Values

    private static func configuration(from settings: SettingValues, readFile: (String) throws -> String) throws -> ServerConfiguration {
        func one(_ name: String) -> (value: String, source: String)? {
            settings[name].map { ($0.values.last ?? "", $0.source) }
        }
        let dataDirectory = try one("data-dir").map { value, source in
            guard !value.isEmpty else { throw DaemonUsageError("\(source): the data directory must not be empty") }
            return value
        } ?? defaultDataDirectory
        var listen = [SocketAddress.ipv4Loopback(port: 8080)]
        if let setting = settings["listen"] {
            listen = try setting.values.map { text in
                do { return try SocketAddress(parsing: text) } catch {
                    throw DaemonUsageError("\(setting.source): \"\(text)\" is not HOST:PORT with an IP address (IPv6 as [::1]:8080)")
                }
            }
            guard !listen.isEmpty else { throw DaemonUsageError("\(setting.source): at least one address is needed") }
            // SO_REUSEPORT would let a repeated address bind twice and split its connections.
            var seen: Set<SocketAddress> = []
            for address in listen where address.port != 0 && !seen.insert(address).inserted {
                throw DaemonUsageError("\(setting.source): \(address) is given more than once")
            }
        }
        var configuration = ServerConfiguration(dataDirectory: dataDirectory, listenAddresses: listen)
        if let setting = settings["tls-listen"] {
            configuration.tlsListenAddresses = try setting.values.map { text in
                do { return try SocketAddress(parsing: text) } catch {
                    throw DaemonUsageError("\(setting.source): \"\(text)\" is not HOST:PORT with an IP address (IPv6 as [::1]:8443)")
                }
            }
            var seen = Set(listen.filter { $0.port != 0 })
            for address in configuration.tlsListenAddresses where address.port != 0 && !seen.insert(address).inserted {
                throw DaemonUsageError("\(setting.source): \(address) is given more than once (or is also a plain listen address)")
            }
        }
        configuration.tlsCertificateFile = one("tls-cert")?.value
        configuration.tlsKeyFile = one("tls-key")?.value
        let tlsGiven = [!configuration.tlsListenAddresses.isEmpty, configuration.tlsCertificateFile != nil, configuration.tlsKeyFile != nil]
        if tlsGiven.contains(true) && tlsGiven.contains(false) {
            throw DaemonUsageError("--tls-listen, --tls-cert and --tls-key go together: give all three or none")
        }
        if configuration.tlsCertificateFile == "" || configuration.tlsKeyFile == "" {
            throw DaemonUsageError("--tls-cert and --tls-key must name files")
        }
        if let (value, source) = one("sip-listen") {
            let address: SocketAddress
            do { address = try SocketAddress(parsing: value) } catch {
                throw DaemonUsageError("\(source): \"\(value)\" is not HOST:PORT with an IP address (IPv6 as [::1]:5060)")
            }
            // SIP's TCP listener cannot share a port with the HTTP ones.
            if address.port != 0, (listen + configuration.tlsListenAddresses).contains(address) {
                throw DaemonUsageError("\(source): \(address) is also a listen address for HTTP")
            }
            configuration.sipListenAddress = address
        }
        if let (value, source) = one("sip-requests-per-second") { configuration.sipRequestsPerSecond = try integer(value, source, 1...1_000_000) }
        if let (value, source) = one("sip-request-burst") { configuration.sipRequestBurst = try integer(value, source, 1...1_000_000) }
        if let (value, source) = one("sip-force-rport") { configuration.sipForceReturnPort = try boolean(value, source) }
        configuration.sipGateway = try SIPGatewaySettings.gateway(settings, readFile: readFile)
        if configuration.sipGateway != nil, configuration.sipListenAddress == nil {
            throw DaemonUsageError("calls through SIP (--sip-trunk, --sip-route, --sip-outbound-proxy, --sip-allow-direct) need --sip-listen")
        }
        try SIPGatewaySettings.applyTLS(settings, to: &configuration)
        try NumberRouteSettings.apply(settings, to: &configuration)
        if let (value, source) = one("sip-media-sdes") { configuration.sipMediaOffersSDES = try boolean(value, source) }
        if let (value, source) = one("media-ports") { configuration.mediaPorts = try portRange(value, source) }
        if let (value, source) = one("media-address") { configuration.mediaBindAddress = try ipAddress(value, source) }
        if let (value, source) = one("announce-address") { configuration.mediaAnnouncedAddress = try ipAddress(value, source) }
        if let (value, source) = one("ring-timeout") { configuration.ringTimeout = try seconds(value, source) }
        if let (value, source) = one("conference-rate") {
            guard value == "16000" || value == "48000" else { throw DaemonUsageError("\(source): \"\(value)\" is not a room rate (16000 or 48000)") }
            configuration.conferenceRoomRate = Int(value) ?? 48_000
        }
        if let (value, source) = one("conference-opus-complexity") {
            configuration.conferenceOpusComplexity = try integer(value, source, 0...10)
        }
        if let (value, _) = one("prompt-directory") { configuration.promptDirectory = value.isEmpty ? nil : value }
        if let (value, _) = one("recording-directory") { configuration.recordingDirectory = value.isEmpty ? nil : value }
        if let (value, _) = one("conference-hold-music") { configuration.conferenceHoldMusicPath = value.isEmpty ? nil : value }
        if let (value, source) = one("conference-linger") { configuration.conferenceLinger = value == "0" ? .zero : try seconds(value, source) }
        if let (value, source) = one("media-timeout") { configuration.mediaInactivityTimeout = try seconds(value, source) }
        if let (value, source) = one("media-setup-timeout") { configuration.mediaSetupTimeout = try seconds(value, source) }
        if let (value, source) = one("max-call-length") { configuration.maximumCallLength = try seconds(value, source) }
        if let (value, source) = one("reconnect-grace") { configuration.reconnectGrace = try seconds(value, source) }
        if let (value, source) = one("hello-timeout") { configuration.helloTimeout = try seconds(value, source) }
        if let (value, source) = one("heartbeat") { configuration.heartbeatInterval = try seconds(value, source) }
        if let (value, source) = one("max-frame-size") { configuration.maxFrameSize = try integer(value, source, 1024...(16 << 20)) }
        if let (value, source) = one("max-requests-per-second") { configuration.maxRequestsPerSecond = try integer(value, source, 1...100_000) }
        if let (value, source) = one("request-burst") { configuration.requestBurst = try integer(value, source, 1...1_000_000) }
        if let (value, source) = one("max-connections") { configuration.maxConnections = try integer(value, source, 1...10_000_000) }
        if let (value, source) = one("max-calls-per-user") { configuration.maxCallsPerUser = try integer(value, source, 1...1_000_000) }
        if let (value, source) = one("max-calls-per-app") { configuration.maxCallsPerApplication = try integer(value, source, 1...10_000_000) }
        if let (value, source) = one("max-media-legs-per-app") {
            configuration.maxMediaLegsPerApplication = try integer(value, source, 1...65_536)
        }
        if let (value, source) = one("edge-loops") { configuration.edgeLoopCount = try integer(value, source, 1...1024) }
        if let (value, source) = one("log-level") {
            guard let level = LogLevel(rawValue: value) else {
                throw DaemonUsageError("\(source): \"\(value)\" is not a log level (debug, info, warning, error)")
            }
            configuration.logLevel = level
        }
        if let (value, source) = one("no-dev-app") { configuration.createDevelopmentApplication = !(try boolean(value, source)) }
        if let (value, source) = one("apns-url") { configuration.pushEndpoints.apnsProduction = try baseURL(value, source) }
        if let (value, source) = one("apns-sandbox-url") { configuration.pushEndpoints.apnsDevelopment = try baseURL(value, source) }
        if let (value, source) = one("fcm-url") { configuration.pushEndpoints.fcm = try baseURL(value, source) }
        if let (value, source) = one("fcm-token-url") { configuration.pushFCMTokenURL = try baseURL(value, source) }
        if let (value, source) = one("push-ca-file") {
            guard !value.isEmpty else { throw DaemonUsageError("\(source): the certificate file must not be empty") }
            configuration.pushCAFile = value
        }
        if let (value, source) = one("push-timeout") { configuration.pushRequestTimeout = try seconds(value, source) }
        var retry = configuration.pushRetryPolicy
        if let (value, source) = one("push-attempts") { retry.maxAttempts = try integer(value, source, 1...20) }
        if let (value, source) = one("push-retry-delay") { retry.baseDelayMilliseconds = try seconds(value, source).wholeMilliseconds }
        if let (value, source) = one("push-retry-max-delay") { retry.maxDelayMilliseconds = try seconds(value, source).wholeMilliseconds }
        guard retry.maxDelayMilliseconds >= retry.baseDelayMilliseconds else {
            let source = settings["push-retry-max-delay"]?.source ?? settings["push-retry-delay"]?.source ?? "push-retry-delay"
            throw DaemonUsageError("\(source): the largest push backoff must not be below the first (push-retry-delay)")
        }
        configuration.pushRetryPolicy = retry
        return configuration
    }

    /// An `https://` (or, for a local emulator, `http://`) URL without query or fragment,
    /// given without its trailing slash since request paths are appended to it.
    static func baseURL(_ text: String, _ source: String) throws -> String {
        var url = Substring(text)
        while url.hasSuffix("/") { url = url.dropLast() }
        let scheme = url.hasPrefix("https://") ? "https://" : url.hasPrefix("http://") ? "http://" : nil
        let printable = url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard let scheme, printable, url.count > scheme.count, url.utf8.count <= 2048 else {
            throw DaemonUsageError("\(source): \"\(text)\" is not an https:// or http:// URL without query or fragment")
        }
        return String(url)
    }

    /// A positive number of seconds (a decimal fraction allowed) at millisecond precision.
    static func seconds(_ text: String, _ source: String) throws -> Duration {
        let ascii = text.utf8.allSatisfy { (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }
        guard ascii, let value = Double(text), value.isFinite, value >= 0.001, value <= 100_000_000 else {
            throw DaemonUsageError("\(source): \"\(text)\" is not a number of seconds (0.001 to 100000000)")
        }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    static func integer(_ text: String, _ source: String, _ range: ClosedRange<Int>) throws -> Int {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int(text), range.contains(value) else {
            throw DaemonUsageError("\(source): \"\(text)\" is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    static func portRange(_ text: String, _ source: String) throws -> ClosedRange<UInt16> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let bad = DaemonUsageError("\(source): \"\(text)\" is not a UDP port range LO-HI or one port (1-65535)")
        guard parts.count == 1 || parts.count == 2 else { throw bad }
        let ports = try parts.map { part -> UInt16 in
            guard let port = try? integer(String(part), source, 1...65_535) else { throw bad }
            return UInt16(port)
        }
        guard ports[0] <= ports[ports.count - 1] else { throw bad }
        return ports[0]...ports[ports.count - 1]
    }

    /// An IP address without port (IPv6 with or without brackets).
    static func ipAddress(_ text: String, _ source: String) throws -> SocketAddress {
        var host = Substring(text)
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard let address = SocketAddress(host: String(host), port: 0) else {
            throw DaemonUsageError("\(source): \"\(text)\" is not an IP address")
        }
        return address
    }

    static func boolean(_ text: String, _ source: String) throws -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw DaemonUsageError("\(source): \"\(text)\" is not a boolean (true/false, 1/0, yes/no)")
        }
    }

    // MARK: app

    private static func app(_ arguments: [String], _ environment: [String: String],
                            _ readFile: (String) throws -> String) throws -> DaemonCommand {
        guard let subcommand = arguments.first else {
            throw DaemonUsageError("parleyd app needs a command: create, list, rotate-secret, show, set-cli, set-dialling, push or callback (see parleyd --help)")
        }
        if subcommand == "--help" || subcommand == "-h" { return .help }
        if subcommand == "push" {
            return try withAdminOptions(Array(arguments.dropFirst()), environment, readFile) { rest throws(DaemonUsageError) in
                let command = try PushAdminCommands.parse(rest)
                return { .appPush($0, command) }
            }
        }
        if subcommand == "callback" {
            return try withAdminOptions(Array(arguments.dropFirst()), environment, readFile) { rest throws(DaemonUsageError) in
                let command = try CallbackAdminCommands.parse(rest)
                return { .appCallback($0, command) }
            }
        }
        if DiallingAdminCommands.subcommands.contains(subcommand) {
            return try withAdminOptions(arguments, environment, readFile) { rest throws(DaemonUsageError) in
                let command = try DiallingAdminCommands.parse(rest)
                return { .appDialling($0, command) }
            }
        }
        guard ["create", "list", "rotate-secret"].contains(subcommand) else {
            throw DaemonUsageError("unknown app command \"\(subcommand)\" (create, list, rotate-secret, show, set-cli, set-dialling, push, callback)")
        }
        var flags = SettingValues()
        var json = false
        var showSecrets = false
        var name: String?
        var grace: String?
        var positional: [String] = []
        var index = 1
        func value(_ flag: String, _ inline: String?) throws -> String {
            if let inline { return inline }
            guard index < arguments.count else { throw DaemonUsageError("--\(flag) needs a value") }
            index += 1
            return arguments[index - 1]
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            let (flag, inline) = splitFlag(argument)
            switch (flag, subcommand) {
            case ("help", _): return .help
            case ("data-dir", _), ("config", _):
                guard flags[flag] == nil else { throw DaemonUsageError("--\(flag) is given more than once") }
                flags[flag] = Setting(source: "--" + flag, values: [try value(flag, inline)])
            case ("json", _):
                guard inline == nil else { throw DaemonUsageError("--json takes no value") }
                json = true
            case ("name", "create"): name = try value(flag, inline)
            case ("show-secrets", "list"):
                guard inline == nil else { throw DaemonUsageError("--show-secrets takes no value") }
                showSecrets = true
            case ("grace", "rotate-secret"): grace = try value(flag, inline)
            default:
                throw DaemonUsageError("unknown flag --\(flag) for parleyd app \(subcommand) (see parleyd --help)")
            }
        }
        // The data directory follows the same precedence as for serve; the file's other
        // keys are still checked, so a typo there is caught here too.
        let settings = try mergedSettings(flags: flags, environment.filter { ["PARLEY_DATA_DIR", "PARLEY_CONFIG"].contains($0.key) }, readFile)
        let dataDirectory = settings["data-dir"]?.values.last ?? defaultDataDirectory
        guard !dataDirectory.isEmpty else { throw DaemonUsageError("the data directory must not be empty") }
        let options = AdminOptions(dataDirectory: dataDirectory, json: json)
        switch subcommand {
        case "create":
            guard positional.isEmpty else { throw DaemonUsageError("unexpected argument \"\(positional[0])\" for parleyd app create") }
            let name = name ?? "default"
            guard !name.isEmpty, name.utf8.count <= 200 else { throw DaemonUsageError("--name must be 1-200 bytes") }
            return .appCreate(options, name: name)
        case "list":
            guard positional.isEmpty else { throw DaemonUsageError("unexpected argument \"\(positional[0])\" for parleyd app list") }
            return .appList(options, showSecrets: showSecrets)
        default:
            guard positional.count == 1 else {
                throw DaemonUsageError(positional.isEmpty ? "parleyd app rotate-secret needs the application KEY"
                                                          : "parleyd app rotate-secret takes one KEY, not \(positional.count)")
            }
            var graceSeconds = defaultGracePeriodSeconds
            if let grace {
                graceSeconds = Int64(try integer(grace, "--grace", 0...(10 * 365 * 86_400)))
            }
            return .appRotateSecret(options, key: positional[0], gracePeriodSeconds: graceSeconds)
        }
    }

    /// `app push ...` and the dialling commands: the common `--data-dir`, `--config` and
    /// `--json` here, the rest in the command's own parser (`PushAdminCommands.parse`,
    /// `DiallingAdminCommands.parse`), whose answer is completed with the options.
    private static func withAdminOptions(
        _ arguments: [String], _ environment: [String: String], _ readFile: (String) throws -> String,
        parse: ([String]) throws(DaemonUsageError) -> (AdminOptions) -> DaemonCommand
    ) throws -> DaemonCommand {
        var flags = SettingValues()
        var json = false
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            let (flag, inline) = argument.hasPrefix("--") ? splitFlag(argument) : ("", nil)
            switch flag {
            case "help": return .help
            case "json":
                guard inline == nil else { throw DaemonUsageError("--json takes no value") }
                json = true
            case "data-dir", "config":
                guard flags[flag] == nil else { throw DaemonUsageError("--\(flag) is given more than once") }
                var value = inline
                if value == nil {
                    guard index < arguments.count else { throw DaemonUsageError("--\(flag) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                flags[flag] = Setting(source: "--" + flag, values: [value ?? ""])
            default: rest.append(argument)
            }
        }
        let command = try parse(rest)
        let settings = try mergedSettings(flags: flags, environment.filter { ["PARLEY_DATA_DIR", "PARLEY_CONFIG"].contains($0.key) }, readFile)
        let dataDirectory = settings["data-dir"]?.values.last ?? defaultDataDirectory
        guard !dataDirectory.isEmpty else { throw DaemonUsageError("the data directory must not be empty") }
        return command(AdminOptions(dataDirectory: dataDirectory, json: json))
    }
}
