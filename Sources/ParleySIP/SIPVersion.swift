/// The protocol version of a start line (`SIP/2.0`, RFC 3261 §7.1). Another version still
/// parses, so a request can be answered 505 (RFC 4475 §3.1.2.16).
public struct SIPVersion: Sendable, Hashable, CustomStringConvertible {
    /// The number before the dot.
    public var major: UInt16
    /// The number after the dot.
    public var minor: UInt16

    /// A version from its numbers.
    public init(major: UInt16, minor: UInt16) {
        self.major = major
        self.minor = minor
    }

    /// SIP/2.0, the only version there is.
    public static let sip20 = SIPVersion(major: 2, minor: 0)

    /// `"SIP" "/" 1*DIGIT "." 1*DIGIT` ("SIP" in any case).
    static func parse(_ bytes: ArraySlice<UInt8>) -> SIPVersion? {
        guard bytes.count >= 7, bytes.count <= 16, SIPGrammar.equalsIgnoringCase(String(decoding: bytes.prefix(4), as: UTF8.self), "SIP/") else {
            return nil
        }
        let numbers = bytes.dropFirst(4).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard numbers.count == 2, let major = SIPGrammar.decimal(numbers[0], as: UInt16.self),
              let minor = SIPGrammar.decimal(numbers[1], as: UInt16.self) else { return nil }
        return SIPVersion(major: major, minor: minor)
    }

    /// `SIP/2.0`.
    public var description: String { "SIP/\(major).\(minor)" }
}
