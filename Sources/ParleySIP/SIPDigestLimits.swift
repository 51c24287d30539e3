/// The bounds on untrusted input and on kept state in SIP digest authentication. Header
/// values come from the network, so every parser checks them before doing any work.
public enum SIPDigestLimits {
    /// The longest WWW-Authenticate, Proxy-Authenticate, Authorization or
    /// Proxy-Authorization value read, in bytes. Real ones are 200 to 600 bytes (a
    /// nonce, an opaque and a URI or two); 4 KiB leaves room for long nonces.
    public static let maxHeaderValueBytes = 4096
    /// The most `name=value` parameters read in one value (RFC 3261 defines eleven).
    public static let maxParameters = 32
    /// The most challenge or credential header values considered in one message: one per
    /// algorithm per realm is what RFC 8760 §2.4 expects, so eight is plenty.
    public static let maxHeaderValues = 8
    /// The most realms a `SIPDigestClient` remembers a nonce for (a trunk has one or two:
    /// its proxy and its registrar); the least recently used is forgotten first.
    public static let maxRealms = 8
    /// How many `stale=true` challenges in a row a `SIPDigestClient` answers for one realm
    /// before giving up, so a server that never accepts its own nonces cannot make it loop.
    public static let maxStaleRetries = 2
}
