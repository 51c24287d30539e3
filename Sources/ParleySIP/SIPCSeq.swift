/// The CSeq header (RFC 3261 §20.16): a sequence number and the request's method.
public struct SIPCSeq: Sendable, Hashable, CustomStringConvertible {
    /// The sequence number (a 32-bit unsigned integer, §8.1.1.5).
    public var sequence: UInt32
    /// The method; it must equal the request's (§8.1.1.5).
    public var method: SIPMethod

    /// A CSeq from its parts.
    public init(sequence: UInt32, method: SIPMethod) {
        self.sequence = sequence
        self.method = method
    }

    /// Parses `1*DIGIT LWS Method`; leading zeros are fine (RFC 4475 §3.1.1.1 has
    /// `0009`), a number past 2^32-1 is not (§3.1.2.4).
    public init(parsing text: some StringProtocol) throws(SIPError) {
        var scanner = SIPValueScanner(text)
        scanner.skipWhitespace()
        let digits = scanner.run { !SIPGrammar.isDigit($0) }
        guard let sequence = SIPGrammar.decimal(digits, as: UInt32.self) else {
            throw SIPError(.malformedHeader, "CSeq number \(SIPGrammar.quote(digits)) is not a 32-bit number")
        }
        let beforeSpace = scanner.index
        scanner.skipWhitespace()
        guard scanner.index > beforeSpace, let method = scanner.tokenString() else {
            throw SIPError(.malformedHeader, "no method after the CSeq number")
        }
        try scanner.expectEnd("the CSeq method")
        self.init(sequence: sequence, method: SIPMethod(token: method))
    }

    /// `<number> <METHOD>`.
    public var description: String { "\(sequence) \(method.token)" }
}
