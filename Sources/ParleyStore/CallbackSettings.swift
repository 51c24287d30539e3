/// How one application's backend is called back (issue 12): where, trusting which CA, how
/// long parleyd waits for an answer, which events it sends, and whether calls placed from
/// the app ask the backend too. Kept in the store per application
/// (`CallStore.setCallbackSettings`), set with `parleyd app callback set`, read by a running
/// server through ParleyServer's `CallbackSettingsSource`. An application without them gets
/// no callbacks: its numbers follow the static `--sip-number` rules.
///
/// JSON (`Codable`, for `parleyd app callback show --json`): `url`, `caFile` (absent when
/// nil), `timeoutMs`, `events` (in the order of `CallbackEvent.allCases`), `appCalls`.
public struct CallbackSettings: Sendable, Hashable, Codable {
    /// Where the events are POSTed: an `http://` or `https://` URL (see `urlProblem`).
    public var url: String
    /// A PEM file of the CAs the backend's certificate must chain to, instead of the
    /// system's (a backend behind a private CA); only with an `https://` URL.
    public var caFile: String?
    /// How long parleyd waits for the backend's answer before it takes the call's fallback.
    public var timeoutMilliseconds: Int
    /// The events sent; the others are not.
    public var events: Set<CallbackEvent>
    /// Whether calls placed from the app (to a number, a user, a SIP address) ask the
    /// backend how to route them, as inbound calls do.
    public var appCalls: Bool

    /// The default of `timeoutMilliseconds`: long enough for a backend across the
    /// internet, short enough that a caller hears no dead air worth hanging up over.
    public static let defaultTimeoutMilliseconds = 3000
    /// The values `timeoutMilliseconds` may take.
    public static let timeoutMillisecondsRange = 100...30_000
    /// The longest URL kept, in bytes.
    public static let maxURLBytes = 2048
    /// The longest CA file path kept, in bytes.
    public static let maxCAFileBytes = 4096

    public init(
        url: String, caFile: String? = nil, timeoutMilliseconds: Int = CallbackSettings.defaultTimeoutMilliseconds,
        events: Set<CallbackEvent> = Set(CallbackEvent.allCases), appCalls: Bool = false
    ) {
        self.url = url
        self.caFile = caFile
        self.timeoutMilliseconds = timeoutMilliseconds
        self.events = events
        self.appCalls = appCalls
    }

    /// Whether `event` is sent.
    public func sends(_ event: CallbackEvent) -> Bool { events.contains(event) }

    /// `events` in the order of `CallbackEvent.allCases`.
    public var orderedEvents: [CallbackEvent] { events.sorted() }

    /// Why these settings cannot be stored or used, or nil when they can.
    public var problem: String? {
        if let problem = Self.urlProblem(url) { return "URL \"\(Self.printable(url))\" \(problem)" }
        if let caFile {
            if let problem = Self.caFileProblem(caFile) { return "CA file \"\(Self.printable(caFile))\" \(problem)" }
            if !Self.isHTTPS(url) { return "a CA file needs an https:// URL" }
        }
        if !Self.timeoutMillisecondsRange.contains(timeoutMilliseconds) {
            return "timeout \(timeoutMilliseconds) ms is outside \(Self.timeoutMillisecondsRange.lowerBound)...\(Self.timeoutMillisecondsRange.upperBound) ms"
        }
        if events.isEmpty { return "no event is sent (name at least one of \(Self.eventNames))" }
        return nil
    }

    /// Every event name, comma-separated, as `--events` takes them.
    public static var eventNames: String { CallbackEvent.allCases.map(\.rawValue).joined(separator: ",") }

    /// The events a comma-separated list names (`ice,ace`), or why it names none.
    /// Case-insensitive; spaces around names are allowed; a name given twice is refused.
    public static func events(parsing text: String) -> Result<Set<CallbackEvent>, Problem> {
        var events: Set<CallbackEvent> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            var trimmed = part
            while trimmed.first == " " { trimmed.removeFirst() }
            while trimmed.last == " " { trimmed.removeLast() }
            let name = trimmed.lowercased()
            guard let event = CallbackEvent(rawValue: name) else {
                return .failure(Problem(
                    name.isEmpty ? "an empty event name in \"\(printable(text))\" (expected \(eventNames))"
                                 : "unknown event \"\(printable(name))\" (expected \(eventNames))"))
            }
            guard events.insert(event).inserted else {
                return .failure(Problem("event \(name) is named twice"))
            }
        }
        return .success(events)
    }

    /// Why `text` is not a callback URL, or nil: `http://` or `https://` (either case),
    /// a host (a name, an IPv4 address or a bracketed IPv6 one), an optional port 1-65535,
    /// then an optional path and query; printable ASCII without spaces, no user name or
    /// password (the store is not a secret store), no fragment, at most `maxURLBytes`.
    public static func urlProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxURLBytes else { return "is longer than \(maxURLBytes) bytes" }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return "holds spaces, controls or non-ASCII characters" }
        let lowered = text.lowercased()
        let schemeLength: Int
        if lowered.hasPrefix("https://") {
            schemeLength = 8
        } else if lowered.hasPrefix("http://") {
            schemeLength = 7
        } else {
            return "is not an http:// or https:// URL"
        }
        guard !bytes.contains(UInt8(ascii: "#")) else { return "has a fragment (#...)" }
        let rest = bytes[schemeLength...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { return "has a user name or password (give neither in the URL)" }
        return authorityProblem(Array(authority))
    }

    /// Why `path` cannot name a CA file, or nil: empty, a NUL, or longer than `maxCAFileBytes`.
    /// Whether the file exists is for the command that sets it to check.
    public static func caFileProblem(_ path: String) -> String? {
        if path.isEmpty { return "is empty" }
        if path.utf8.contains(0) { return "holds a NUL" }
        if path.utf8.count > maxCAFileBytes { return "is longer than \(maxCAFileBytes) bytes" }
        return nil
    }

    /// Whether `url` starts with `https://` (either case).
    public static func isHTTPS(_ url: String) -> Bool { url.lowercased().hasPrefix("https://") }

    private static func authorityProblem(_ authority: [UInt8]) -> String? {
        guard !authority.isEmpty else { return "has no host" }
        var host = authority[...]
        var port: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return "has an IPv6 address without its ]" }
            host = authority[1..<close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return "has characters after its IPv6 address" }
                port = after.dropFirst()
            }
            let isHex = { (byte: UInt8) in
                (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
            }
            guard host.count >= 2, host.contains(UInt8(ascii: ":")), host.allSatisfy(isHex) else { return "has a malformed IPv6 address" }
        } else {
            if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
                host = authority[..<colon]
                port = authority[(colon + 1)...]
            }
            guard !host.isEmpty else { return "has no host" }
            guard host.count <= 253 else { return "has a host name longer than 253 bytes" }
            for label in host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
                let isNameByte = { (byte: UInt8) in
                    (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte | 0x20) || byte == UInt8(ascii: "-")
                }
                guard (1...63).contains(label.count), label.allSatisfy(isNameByte),
                      label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
                    return "has a malformed host"
                }
            }
        }
        if let port {
            guard (1...5).contains(port.count), port.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(String(decoding: port, as: UTF8.self)), (1...65_535).contains(number) else {
                return "has a port that is not 1-65535"
            }
        }
        return nil
    }

    /// Untrusted text in an error message: at most 60 characters, controls as `?`.
    static func printable(_ text: some StringProtocol) -> String {
        String(text.prefix(60).map { $0.isASCII && (($0.asciiValue ?? 0) < 0x20 || $0.asciiValue == 0x7F) ? "?" : $0 })
    }

    /// Why a callback setting given as text cannot be used: one line for the operator.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    private enum CodingKeys: String, CodingKey {
        case url, caFile, timeoutMs, events, appCalls
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
        timeoutMilliseconds = try container.decode(Int.self, forKey: .timeoutMs)
        events = Set(try container.decode([CallbackEvent].self, forKey: .events))
        appCalls = try container.decode(Bool.self, forKey: .appCalls)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encodeIfPresent(caFile, forKey: .caFile)
        try container.encode(timeoutMilliseconds, forKey: .timeoutMs)
        try container.encode(orderedEvents, forKey: .events)
        try container.encode(appCalls, forKey: .appCalls)
    }
}

