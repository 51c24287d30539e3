/// What one application may dial outside the app, and how much: the toll-fraud limits of
/// a self-hosted trunk (docs/calls.md, "Dialling policy"). Kept with the application in
/// the store (`Application.dialling` in ParleyStore), set with `parleyd app set-cli` and
/// `parleyd app set-dialling`, and enforced by the call core (ParleyCallCore's
/// `DiallingLimiter`) on every call routed to a phone number or a SIP address.
///
/// The defaults dial nothing: no number prefix is allowed and SIP addresses are off, so an
/// application reaches a trunk only once an operator said where it may go. An open PBX is
/// found and abused within hours; a forgotten setting must fail closed.
public struct DiallingSettings: Sendable, Hashable, Codable {
    /// The calling line identity (E.164) a call to a phone number presents when
    /// `call.start` gives no `cli`; nil: such a call is refused (`bad_request`, field `cli`).
    public var defaultCLI: String?
    /// The prefixes (`+` then digits, e.g. `+46`, `+4631`) a phone number must start with
    /// to be called. Empty (the default): no phone number at all.
    public var allowedNumberPrefixes: [String]
    /// Calls to phone numbers in progress at once, at most.
    public var maxConcurrentPhoneCalls: Int
    /// Calls to phone numbers placed within any 60 seconds, at most.
    public var maxPhoneCallsPerMinute: Int
    /// The longest a call to a phone number or SIP address lasts, in seconds from when it is
    /// dialled (ringing included); then it ends with `timeout`. The server's maximum call
    /// length still applies when it is shorter.
    public var maxCallDurationSeconds: Int
    /// Whether SIP addresses may be called (default false).
    public var allowsSIPAddresses: Bool

    /// The default of `maxConcurrentPhoneCalls`.
    public static let defaultMaxConcurrentPhoneCalls = 10
    /// The default of `maxPhoneCallsPerMinute`.
    public static let defaultMaxPhoneCallsPerMinute = 30
    /// The default of `maxCallDurationSeconds`: two hours.
    public static let defaultMaxCallDurationSeconds = 7200

    /// The values `maxConcurrentPhoneCalls` may take.
    public static let concurrentPhoneCallsRange = 0...100_000
    /// The values `maxPhoneCallsPerMinute` may take (the call core keeps one instant per
    /// call placed in the last minute, so this bounds its memory per application).
    public static let phoneCallsPerMinuteRange = 0...10_000
    /// The values `maxCallDurationSeconds` may take: one second to one week.
    public static let callDurationSecondsRange = 1...604_800
    /// How many prefixes `allowedNumberPrefixes` may hold.
    public static let maxPrefixCount = 256

    public init(
        defaultCLI: String? = nil, allowedNumberPrefixes: [String] = [],
        maxConcurrentPhoneCalls: Int = DiallingSettings.defaultMaxConcurrentPhoneCalls,
        maxPhoneCallsPerMinute: Int = DiallingSettings.defaultMaxPhoneCallsPerMinute,
        maxCallDurationSeconds: Int = DiallingSettings.defaultMaxCallDurationSeconds,
        allowsSIPAddresses: Bool = false
    ) {
        self.defaultCLI = defaultCLI
        self.allowedNumberPrefixes = allowedNumberPrefixes
        self.maxConcurrentPhoneCalls = maxConcurrentPhoneCalls
        self.maxPhoneCallsPerMinute = maxPhoneCallsPerMinute
        self.maxCallDurationSeconds = maxCallDurationSeconds
        self.allowsSIPAddresses = allowsSIPAddresses
    }

    /// `maxCallDurationSeconds` as a duration.
    public var maxCallDuration: Duration { .seconds(maxCallDurationSeconds) }

    /// Whether `number` (E.164) starts with one of `allowedNumberPrefixes`.
    public func allowsNumber(_ number: String) -> Bool {
        allowedNumberPrefixes.contains { number.hasPrefix($0) }
    }

    /// Why these settings cannot be stored or used, or nil when they can: a CLI that is not
    /// E.164, a prefix that is not `+` and digits (or is listed twice, or too many), a
    /// limit outside its range.
    public var problem: String? {
        if let defaultCLI, let problem = Self.numberProblem(defaultCLI) {
            return "default CLI \"\(defaultCLI.prefix(40))\" \(problem)"
        }
        if allowedNumberPrefixes.count > Self.maxPrefixCount {
            return "\(allowedNumberPrefixes.count) allowed prefixes exceeds the limit of \(Self.maxPrefixCount)"
        }
        var seen: Set<String> = []
        for prefix in allowedNumberPrefixes {
            if let problem = Self.prefixProblem(prefix) { return "prefix \"\(prefix.prefix(40))\" \(problem)" }
            if !seen.insert(prefix).inserted { return "prefix \(prefix) is listed twice" }
        }
        if !Self.concurrentPhoneCallsRange.contains(maxConcurrentPhoneCalls) {
            return "maximum concurrent phone calls \(maxConcurrentPhoneCalls) is outside \(Self.describe(Self.concurrentPhoneCallsRange))"
        }
        if !Self.phoneCallsPerMinuteRange.contains(maxPhoneCallsPerMinute) {
            return "maximum phone calls per minute \(maxPhoneCallsPerMinute) is outside \(Self.describe(Self.phoneCallsPerMinuteRange))"
        }
        if !Self.callDurationSecondsRange.contains(maxCallDurationSeconds) {
            return "maximum call duration \(maxCallDurationSeconds) s is outside \(Self.describe(Self.callDurationSecondsRange)) s"
        }
        return nil
    }

    /// Why `text` is not an E.164 number (`+` then 2 to 15 digits, the first not 0, as
    /// docs/protocol.md's phone number format), or nil.
    public static func numberProblem(_ text: String) -> String? {
        digitsProblem(text, minimumDigits: 2, what: "an E.164 number: '+' then 2 to 15 digits, the first not 0")
    }

    /// Why `text` is not a number prefix (`+` then 1 to 15 digits, the first not 0), or nil.
    public static func prefixProblem(_ text: String) -> String? {
        digitsProblem(text, minimumDigits: 1, what: "a number prefix: '+' then 1 to 15 digits, the first not 0")
    }

    private static func digitsProblem(_ text: String, minimumDigits: Int, what: String) -> String? {
        let bytes = Array(text.utf8)
        let digits = bytes.dropFirst()
        guard bytes.first == UInt8(ascii: "+"), (minimumDigits...15).contains(digits.count),
              digits.first != UInt8(ascii: "0"),
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return "is not \(what)"
        }
        return nil
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        "\(range.lowerBound)...\(range.upperBound)"
    }
}
