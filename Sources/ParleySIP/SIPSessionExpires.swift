/// The Session-Expires header of session timers (RFC 4028 §4): the session interval and
/// which side refreshes.
public struct SIPSessionExpires: Sendable, Hashable, CustomStringConvertible {
    /// Who sends the refreshes (`refresher`, RFC 4028 §4).
    public enum Refresher: String, Sendable, Hashable {
        case uac, uas
    }

    /// The session interval in seconds.
    public var interval: UInt32
    /// The refresher, when named.
    public var refresher: Refresher?
    /// Parameters other than `refresher`, in order.
    public var otherParameters: [SIPParameter]

    /// A Session-Expires value; a `refresher` among `otherParameters` is dropped.
    public init(interval: UInt32, refresher: Refresher? = nil, otherParameters: [SIPParameter] = []) {
        self.interval = interval
        self.refresher = refresher
        self.otherParameters = otherParameters.filter { !SIPGrammar.equalsIgnoringCase($0.name, "refresher") }
    }

    /// Parses `delta-seconds *(SEMI se-params)`.
    public init(parsing text: some StringProtocol) throws(SIPError) {
        var scanner = SIPValueScanner(text)
        let interval = try Self.deltaSeconds(&scanner)
        var refresher: Refresher?
        var others: [SIPParameter] = []
        for parameter in try scanner.parameters() {
            if SIPGrammar.equalsIgnoringCase(parameter.name, "refresher") {
                guard let value = parameter.value, let parsed = Refresher(rawValue: SIPGrammar.lowercased(value)) else {
                    throw SIPError(.malformedHeader, "refresher must be uac or uas")
                }
                refresher = parsed
            } else {
                others.append(parameter)
            }
        }
        try scanner.expectEnd("Session-Expires")
        self.init(interval: interval, refresher: refresher, otherParameters: others)
    }

    /// Reads `delta-seconds` (a number below 2^32) after optional whitespace.
    static func deltaSeconds(_ scanner: inout SIPValueScanner) throws(SIPError) -> UInt32 {
        scanner.skipWhitespace()
        let digits = scanner.run { !SIPGrammar.isDigit($0) }
        guard let value = SIPGrammar.decimal(digits, as: UInt32.self) else {
            throw SIPError(.malformedHeader, "\(SIPGrammar.quote(digits)) is not delta-seconds")
        }
        return value
    }

    /// `1800;refresher=uac`.
    public var description: String {
        var out = String(interval)
        if let refresher { out += ";refresher=" + refresher.rawValue }
        return out + otherParameters.serialized
    }
}
