/// `a=setup` (RFC 4145 §4, used for DTLS by RFC 8842): who starts the DTLS handshake.
public enum DTLSSetup: String, SDPAttributeValue, CaseIterable {
    /// We will connect (be the DTLS client).
    case active
    /// We will wait (be the DTLS server).
    case passive
    /// Either; the answerer chooses. What offers carry.
    case actpass
    /// No connection for now.
    case holdconn

    public static let attributeName = "setup"

    public init(attributeValue: String) throws(SDPError) {
        guard let value = DTLSSetup(rawValue: attributeValue) else {
            throw .malformed(Self.self, "\(SDPText.quote(attributeValue)) is not active, passive, actpass or holdconn")
        }
        self = value
    }

    public var attributeValue: String { rawValue }

    /// The role an answerer takes to an offer of `self` (RFC 4145 §4.1, RFC 8842 §5.3),
    /// `preferred` deciding an `actpass` offer.
    public func answer(preferring preferred: DTLSSetup) -> DTLSSetup {
        switch self {
        case .actpass: preferred == .passive ? .passive : .active
        case .active: .passive
        case .passive: .active
        case .holdconn: .holdconn
        }
    }
}
