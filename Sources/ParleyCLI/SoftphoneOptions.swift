import ParleyAuth
import ParleySDK

/// What `parley call` and `parley listen` were asked to do, after the flags were checked.
/// Parsing is a pure function of the arguments (no files are opened, no clock is read),
/// so every flag rule is tested without a server.
struct SoftphoneOptions: Equatable {
    enum Mode: Equatable {
        /// `parley call <destination>`: place one call to `callee`, a user id, phone number
        /// (E.164) or SIP address (`user@domain[:port][;transport=...]`, without `sip:`)
        /// as `kind` says.
        case call(callee: String, kind: ParleyCallRemoteKind = .user)
        /// `parley listen`: take incoming calls.
        case listen
    }

    /// How the user token reaches `hello`.
    enum Credentials: Equatable {
        /// Minted locally with the application secret, a fresh token for every connect
        /// (each nonce works once).
        case secret(String, lifetime: Int64)
        /// One token given on the command line: good for one connect only.
        case token(String)
    }

    /// What this side sends as audio.
    enum Source: Equatable {
        case tone(frequency: Double)
        case wavFile(path: String)
        /// An ALSA device for capture and playback both (`--device[=NAME]`).
        case device(name: String)
    }

    /// What an incoming call gets without a person at the keyboard.
    enum AnswerPolicy: Equatable {
        /// Enter answers, `d` then Enter declines.
        case interactive
        /// Answer after `delay` seconds (0: at once).
        case answer(delay: Double)
        case decline
    }

    var mode: Mode
    var serverURL: String
    var applicationKey: String
    var credentials: Credentials
    var userID: String
    var deviceID: String?
    var source: Source
    var recordPath: String?
    /// DTMF tones sent once a call is established (`--dtmf`).
    var dtmf: String?
    /// The name the callee's devices show for this caller (`--display-name`).
    var displayName: String?
    /// The caller id for calls to phone numbers (`--cli`): the client's `cli`.
    var cli: String?
    /// Hang up this many seconds after the call is established; nil waits for the peer.
    var duration: Double?
    var headers: [String: String] = [:]
    var answerPolicy: AnswerPolicy = .interactive
    /// Calls `listen` takes before it exits; 0 means until interrupted.
    var callCount: Int = 0
    var json = false
    /// Seconds between statistics lines; nil uses the default (1 s on a terminal, else 5 s).
    var statisticsInterval: Double?
    /// How long to wait for the server to accept the connection.
    var connectTimeout: Double = 10
    /// `--ca-file`: CAs to trust for an `https://` server instead of the system's.
    var caFile: String?
    /// `listen --push-token`: the push token to register once signed in.
    var pushToken: PushToken?
    /// `listen --push-store`: the file that keeps the push registration (token and push
    /// key) between runs; nil keeps it in memory for this run only.
    var pushStorePath: String?
    /// `listen --relay-push`: a file holding a received push's payload, to report to the
    /// (headless) system and relay as a woken app does.
    var relayPushPath: String?

    /// A push token as `push.register` sends it (docs/protocol.md).
    struct PushToken: Equatable {
        enum Service: String, CaseIterable { case apnsVoip, fcm }
        enum Environment: String, CaseIterable { case sandbox, production }
        var token: String
        var service: Service
        var environment: Environment
        var appID: String
    }

    /// Default tones: different for the two sides, so a recording shows whose audio it is.
    static let defaultCallTone = 440.0
    static let defaultListenTone = 1000.0
    /// Lifetime of locally minted tokens; a token is only needed to open a connection.
    static let defaultTokenLifetime: Int64 = 600
    static let maximumTokenLifetime: Int64 = 24 * 3600
    /// Highest tone: below the Nyquist frequency of the 48 kHz pipeline with a margin.
    static let toneRange: ClosedRange<Double> = 20...20_000
}

extension SoftphoneOptions.Mode {
    /// The destination of `call`; nil for `listen`.
    var callee: String? {
        if case .call(let callee, _) = self { return callee }
        return nil
    }

    /// What the destination of `call` is; nil for `listen`.
    var calleeKind: ParleyCallRemoteKind? {
        if case .call(_, let kind) = self { return kind }
        return nil
    }
}

/// A usage error: reported as one line on standard error with exit status 2.
struct SoftphoneUsageError: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

extension SoftphoneOptions {
    /// Parses the arguments after `call` or `listen`.
    static func parse(command: String, _ arguments: [String]) throws(SoftphoneUsageError) -> SoftphoneOptions {
        guard command == "call" || command == "listen" || command == "conference" else { throw SoftphoneUsageError("unknown command '\(command)'") }
        // `parley conference ROOM` is a call to a room: the call's options, its destination
        // a conference id.
        let isConference = command == "conference"
        let isCall = command == "call" || isConference
        var reader = ArgumentReader(arguments)
        var positional: [String] = []
        var server: String?, app: String?, secret: String?, token: String?, user: String?, device: String?
        var ttl: Int64?, play: String?, tone: Double?, record: String?, duration: Double?
        var headers: [String: String] = [:]
        var answer = false, decline = false, answerDelay: Double?, count: Int?
        var json = false, interval: Double?, connectTimeout: Double?, caFile: String?
        var pushToken: String?, pushType: PushToken.Service?, pushEnvironment: PushToken.Environment?, pushAppID: String?
        var pushStore: String?, relayPush: String?, audioDevice: String?, dtmf: String?, displayName: String?
        var phone: String?, sip: String?, cli: String?

        while let argument = reader.next() {
            guard argument.hasPrefix("-"), argument != "-" else {
                positional.append(argument)
                continue
            }
            let (flag, inline) = splitInlineValue(argument)
            func value() throws(SoftphoneUsageError) -> String { try reader.value(for: flag, inline: inline) }
            func noValue() throws(SoftphoneUsageError) {
                if inline != nil { throw SoftphoneUsageError("\(flag) takes no value") }
            }
            switch flag {
            case "--server": server = try setOnce(server, flag, value())
            case "--app": app = try setOnce(app, flag, value())
            case "--secret": secret = try setOnce(secret, flag, value())
            case "--token": token = try setOnce(token, flag, value())
            case "--as": user = try setOnce(user, flag, value())
            case "--device-id": device = try setOnce(device, flag, value())
            case "--ttl": ttl = try setOnce(ttl, flag, parseTokenLifetime(value()))
            case "--play": play = try setOnce(play, flag, nonEmpty(value(), flag))
            case "--tone": tone = try setOnce(tone, flag, parseTone(value()))
            case "--record": record = try setOnce(record, flag, nonEmpty(value(), flag))
            case "--dtmf":
                let tones = try value()
                guard !tones.isEmpty, tones.count <= 64, tones.allSatisfy({ "0123456789*#ABCD".contains($0) }) else {
                    throw SoftphoneUsageError("--dtmf '\(tones)' must be 1-64 of 0-9 * # A-D")
                }
                dtmf = try setOnce(dtmf, flag, tones)
            // An optional value, inline only: `--device` alone is the default device.
            case "--device": audioDevice = try setOnce(audioDevice, flag, nonEmpty(inline ?? "default", flag))
            case "--duration": duration = try setOnce(duration, flag, parseSeconds(value(), flag))
            case "--stats-interval": interval = try setOnce(interval, flag, parseSeconds(value(), flag))
            case "--connect-timeout": connectTimeout = try setOnce(connectTimeout, flag, parseSeconds(value(), flag))
            case "--ca-file": caFile = try setOnce(caFile, flag, nonEmpty(value(), flag))
            case "--json": try noValue(); json = true
            case "--display-name" where isCall: displayName = try setOnce(displayName, flag, nonEmpty(value(), flag))
            case "--phone" where isCall: phone = try setOnce(phone, flag, value())
            case "--sip" where isCall: sip = try setOnce(sip, flag, value())
            case "--cli" where isCall: cli = try setOnce(cli, flag, parseCLI(value()))
            case "--header" where isCall:
                let (name, headerValue) = try parseHeader(value())
                guard headers[name] == nil else { throw SoftphoneUsageError("--header \(name) given twice") }
                headers[name] = headerValue
            case "--answer" where !isCall: try noValue(); answer = true
            case "--decline" where !isCall: try noValue(); decline = true
            case "--answer-delay" where !isCall: answerDelay = try setOnce(answerDelay, flag, parseSeconds(value(), flag, allowZero: true))
            case "--count" where !isCall: count = try setOnce(count, flag, parseCount(value()))
            case "--push-token" where !isCall: pushToken = try setOnce(pushToken, flag, value())
            case "--push-type" where !isCall: pushType = try setOnce(pushType, flag, parseChoice(value(), flag))
            case "--push-environment" where !isCall: pushEnvironment = try setOnce(pushEnvironment, flag, parseChoice(value(), flag))
            case "--push-app-id" where !isCall: pushAppID = try setOnce(pushAppID, flag, value())
            case "--push-store" where !isCall: pushStore = try setOnce(pushStore, flag, nonEmpty(value(), flag))
            case "--relay-push" where !isCall: relayPush = try setOnce(relayPush, flag, nonEmpty(value(), flag))
            default:
                throw SoftphoneUsageError("unknown option '\(flag)' for parley \(command)")
            }
        }

        let mode: Mode
        if isConference {
            mode = try conferenceMode(positional: positional, phone: phone, sip: sip)
        } else if isCall {
            mode = try callMode(positional: positional, phone: phone, sip: sip)
        } else {
            guard positional.isEmpty else { throw SoftphoneUsageError("unexpected argument '\(positional[0])' for parley listen") }
            mode = .listen
        }

        guard let server else { throw SoftphoneUsageError("missing --server URL (e.g. http://127.0.0.1:8080)") }
        try validateServerURL(server)
        guard let app else { throw SoftphoneUsageError("missing --app KEY") }
        guard ApplicationCredentials.isValidKey(app) else {
            throw SoftphoneUsageError("--app '\(app)' is not an application key (1-64 bytes of A-Z a-z 0-9 - _)")
        }

        let credentials: Credentials
        switch (secret, token) {
        case (nil, nil): throw SoftphoneUsageError("missing --secret SECRET (to mint tokens) or --token JWT")
        case (.some, .some): throw SoftphoneUsageError("--secret and --token exclude each other")
        case (let secret?, nil):
            do { _ = try ApplicationSecret(base64: secret) } catch {
                throw SoftphoneUsageError("--secret is not an application secret: \(error.description)")
            }
            credentials = .secret(secret, lifetime: ttl ?? defaultTokenLifetime)
        case (nil, let token?):
            if ttl != nil { throw SoftphoneUsageError("--ttl applies only to tokens minted with --secret") }
            let claims: UserToken
            do { claims = try UserToken.decodeUnverified(token) } catch {
                throw SoftphoneUsageError("bad token: \(error.description)")
            }
            guard claims.applicationKey == app else {
                throw SoftphoneUsageError("bad token: it is for application '\(claims.applicationKey)', not --app '\(app)'")
            }
            if let user, user != claims.userID {
                throw SoftphoneUsageError("bad token: it is for user '\(claims.userID)', not --as '\(user)'")
            }
            user = claims.userID
            credentials = .token(token)
        }
        guard let user else { throw SoftphoneUsageError("missing --as USER (the user this device signs in as)") }
        guard UserToken.isValidUserID(user) else { throw SoftphoneUsageError(badUserID("--as", user)) }
        if let device, !isValidDeviceID(device) {
            throw SoftphoneUsageError("--device-id '\(device)' must be 1-128 bytes of A-Z a-z 0-9 . _ : -")
        }

        let source: Source
        switch (play, tone, audioDevice) {
        case (.some, .some, _): throw SoftphoneUsageError("--play and --tone exclude each other")
        case (.some, _, .some), (_, .some, .some):
            throw SoftphoneUsageError("--device sends the microphone: it excludes --play and --tone")
        case (nil, nil, let name?):
            guard record == nil else { throw SoftphoneUsageError("--device plays what it receives: it excludes --record") }
            source = .device(name: name)
        case (let path?, nil, nil): source = .wavFile(path: path)
        case (nil, let frequency, nil): source = .tone(frequency: frequency ?? (isCall ? defaultCallTone : defaultListenTone))
        }

        try validateHeaders(headers)
        if let kind = mode.calleeKind, kind != .user {
            try validateSIPHeaders(headers)
        } else if dtmf != nil, isCall {
            throw SoftphoneUsageError("--dtmf needs a call to a phone number or SIP address: app-to-app calls carry no DTMF")
        }
        if cli != nil, mode.calleeKind != .phone {
            throw SoftphoneUsageError("--cli is the caller id of calls to phone numbers: it needs a +NUMBER or --phone destination")
        }
        if answer && decline { throw SoftphoneUsageError("--answer and --decline exclude each other") }
        if answerDelay != nil && !answer { throw SoftphoneUsageError("--answer-delay needs --answer") }
        let policy: AnswerPolicy = answer ? .answer(delay: answerDelay ?? 0) : decline ? .decline : .interactive

        var options = SoftphoneOptions(
            mode: mode, serverURL: server, applicationKey: app, credentials: credentials, userID: user,
            deviceID: device, source: source, recordPath: record, duration: duration)
        options.headers = headers
        options.answerPolicy = policy
        options.dtmf = dtmf
        options.displayName = displayName
        options.cli = cli
        // Unattended listeners take one call by default, so scripts end; a listener with a
        // person at the keyboard runs until interrupted.
        options.callCount = count ?? (policy == .interactive ? 0 : 1)
        options.json = json
        options.statisticsInterval = interval
        if let connectTimeout { options.connectTimeout = connectTimeout }
        if let caFile {
            guard server.hasPrefix("https://") else { throw SoftphoneUsageError("--ca-file is only used with an https:// --server") }
            options.caFile = caFile
        }
        options.pushToken = try pushRegistration(token: pushToken, type: pushType, environment: pushEnvironment, appID: pushAppID)
        options.pushStorePath = pushStore
        if let relayPush {
            // A push is signed for one device with the key its registration got.
            guard pushStore != nil else {
                throw SoftphoneUsageError("--relay-push needs --push-store FILE: the registration whose push key verifies the push")
            }
            guard device != nil else { throw SoftphoneUsageError("--relay-push needs --device-id: the device the push was sent to") }
            options.relayPushPath = relayPush
        }
        return options
    }

    /// The `--push-*` flags together: a token needs its app id; the others need a token.
    static func pushRegistration(token: String?, type: PushToken.Service?, environment: PushToken.Environment?,
                                 appID: String?) throws(SoftphoneUsageError) -> PushToken? {
        guard let token else {
            if type != nil || environment != nil || appID != nil {
                throw SoftphoneUsageError("--push-type, --push-environment and --push-app-id go with --push-token")
            }
            return nil
        }
        let service = type ?? .apnsVoip
        let bytes = Array(token.utf8)
        guard (1...1024).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw SoftphoneUsageError("--push-token must be 1-1024 bytes of printable ASCII")
        }
        if service == .apnsVoip {
            guard bytes.count % 2 == 0, bytes.allSatisfy({ isHexDigit($0) }) else {
                throw SoftphoneUsageError("--push-token: an APNs VoIP token is the PushKit token in hex, not '\(token)'")
            }
        }
        guard let appID else { throw SoftphoneUsageError("--push-token needs --push-app-id (the bundle id or package name)") }
        let appBytes = appID.utf8
        guard (1...255).contains(appBytes.count), appBytes.allSatisfy(isHeaderNameByte) else {
            throw SoftphoneUsageError("--push-app-id '\(appID)' must be 1-255 bytes of A-Z a-z 0-9 - _ .")
        }
        if service == .fcm && environment == .sandbox {
            throw SoftphoneUsageError("--push-environment sandbox is for APNs; FCM tokens have no environment")
        }
        return PushToken(token: token, service: service, environment: environment ?? .production, appID: appID)
    }

    private static func parseChoice<Choice: RawRepresentable & CaseIterable>(_ text: String, _ flag: String) throws(SoftphoneUsageError) -> Choice
        where Choice.RawValue == String {
        guard let choice = Choice(rawValue: text) else {
            throw SoftphoneUsageError("\(flag) is one of \(Choice.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
        }
        return choice
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// `--flag=value` and `--flag value` are both accepted.
    private static func splitInlineValue(_ argument: String) -> (String, String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    private static func setOnce<T>(_ current: T?, _ flag: String, _ value: T) throws(SoftphoneUsageError) -> T {
        guard current == nil else { throw SoftphoneUsageError("\(flag) given twice") }
        return value
    }

    private static func nonEmpty(_ value: String, _ flag: String) throws(SoftphoneUsageError) -> String {
        guard !value.isEmpty else { throw SoftphoneUsageError("\(flag) needs a file path") }
        return value
    }

    static func parseSeconds(_ text: String, _ flag: String, allowZero: Bool = false) throws(SoftphoneUsageError) -> Double {
        guard let seconds = Double(text), seconds.isFinite, allowZero ? seconds >= 0 : seconds > 0, seconds <= 86_400 else {
            throw SoftphoneUsageError("\(flag) needs a number of seconds \(allowZero ? "from 0" : "above 0") up to 86400, not '\(text)'")
        }
        return seconds
    }

    static func parseTone(_ text: String) throws(SoftphoneUsageError) -> Double {
        guard let frequency = Double(text), frequency.isFinite, toneRange.contains(frequency) else {
            throw SoftphoneUsageError("--tone needs a frequency in Hz from 20 to 20000, not '\(text)'")
        }
        return frequency
    }

    static func parseTokenLifetime(_ text: String) throws(SoftphoneUsageError) -> Int64 {
        guard let seconds = Int64(text), seconds > 0, seconds <= maximumTokenLifetime else {
            throw SoftphoneUsageError("--ttl needs whole seconds from 1 to 86400 (the server's limit), not '\(text)'")
        }
        return seconds
    }

    static func parseCount(_ text: String) throws(SoftphoneUsageError) -> Int {
        guard let count = Int(text), count >= 0, count <= 1_000_000 else {
            throw SoftphoneUsageError("--count needs a number of calls (0 for no limit), not '\(text)'")
        }
        return count
    }

    /// `K=V` with the protocol's header name format and a value without control characters.
    static func parseHeader(_ text: String) throws(SoftphoneUsageError) -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else { throw SoftphoneUsageError("--header needs NAME=VALUE, not '\(text)'") }
        let name = String(text[..<equals]), value = String(text[text.index(after: equals)...])
        let nameBytes = name.utf8
        guard (1...64).contains(nameBytes.count), nameBytes.allSatisfy(isHeaderNameByte) else {
            throw SoftphoneUsageError("--header name '\(name)' must be 1-64 bytes of A-Z a-z 0-9 - _ .")
        }
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SoftphoneUsageError("--header \(name): the value has a control character")
        }
        return (name, value)
    }

    /// The protocol's limits on a set of headers (docs/protocol.md, Field formats).
    static func validateHeaders(_ headers: [String: String]) throws(SoftphoneUsageError) {
        if headers.count > 64 { throw SoftphoneUsageError("at most 64 --header flags, not \(headers.count)") }
        let total = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        if total > 1024 { throw SoftphoneUsageError("--header names and values total \(total) bytes; the protocol allows 1024") }
    }

    private static func isHeaderNameByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    static func isValidDeviceID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...128).contains(bytes.count) && bytes.allSatisfy {
            isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "-")
        }
    }

    /// `http://host[:port]` or `https://host[:port]`, nothing after the authority but an
    /// optional `/`: the SDK derives the WebSocket URL (`/v1/ws`) from it.
    static func validateServerURL(_ url: String) throws(SoftphoneUsageError) {
        let rest: Substring
        if url.hasPrefix("http://") { rest = url.dropFirst(7) } else if url.hasPrefix("https://") { rest = url.dropFirst(8) } else {
            throw SoftphoneUsageError("--server '\(url)' must start with http:// or https://")
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@"),
              !authority.contains(where: { $0 == " " || $0 == "?" || $0 == "#" }) else {
            throw SoftphoneUsageError("--server '\(url)' must be http(s)://HOST[:PORT] with no path")
        }
        var host = authority[...], port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw SoftphoneUsageError("--server '\(url)': unclosed '[' in the IPv6 address") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw SoftphoneUsageError("--server '\(url)': expected ':PORT' after ']'") }
                port = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw SoftphoneUsageError("--server '\(url)' has no host") }
        if let port {
            guard let number = Int(port), (1...65_535).contains(number) else {
                throw SoftphoneUsageError("--server '\(url)': port '\(port)' is not 1-65535")
            }
        }
    }

    private static func badUserID(_ what: String, _ id: String) -> String {
        "\(what) '\(id)' is not a user id (1-255 bytes of A-Z a-z 0-9 - _ =)"
    }
}

/// Walks an argument list, handing out flag values.
struct ArgumentReader {
    private var remaining: ArraySlice<String>
    init(_ arguments: [String]) { remaining = arguments[...] }

    mutating func next() -> String? { remaining.popFirst() }

    /// The value of `flag`: its inline `=value`, else the next argument.
    mutating func value(for flag: String, inline: String?) throws(SoftphoneUsageError) -> String {
        if let inline { return inline }
        // A following flag is a forgotten value, not a value: no token, key or path starts with "--".
        guard let value = remaining.first, !value.hasPrefix("--") else { throw SoftphoneUsageError("\(flag) needs a value") }
        remaining.removeFirst()
        return value
    }
}
