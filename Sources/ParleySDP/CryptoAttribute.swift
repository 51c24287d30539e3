internal import ParleyWireCore

/// `a=crypto:<tag> <crypto-suite> <key-params> [<session-param> ...]` (RFC 4568 §9.1): SDES,
/// an SRTP master key and salt carried in the SDP itself, e.g.
/// `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20|1:4`.
///
/// Key parameters follow SRTP's grammar (RFC 4568 §9.2): `inline:<base64 key||salt>`, then
/// optionally `|<lifetime>` (`2^20` or a packet count) and `|<MKI value>:<MKI length>`;
/// several are separated by `;`. Only `inline` keys exist for SRTP (RFC 4568 §6.1), so any
/// other key method is malformed. For the suites this module knows (`Suite.isKnown`) the
/// decoded key||salt must have the suite's length; any other suite name is kept as
/// written, its keys unchecked, so offer/answer can skip the line and keep going. Session
/// parameters are kept in order as written; the known ones (RFC 4568 §6.3) have their
/// values checked.
///
/// Base64 without its `=` padding is read too (some SIP stacks drop it); what is written
/// is padded (RFC 4648 §4).
///
/// JSON: `{"tag": 1, "suite": "AES_CM_128_HMAC_SHA1_80", "keys": [{"keySaltLength": 30,
/// "lifetime": "2^20", "mki": {"value": 1, "length": 4}}], "sessionParameters": []}`.
/// The key bytes themselves are left out, so logging the JSON does not leak them.
public struct CryptoAttribute: SDPAttributeValue {
    public static let attributeName = "crypto"

    /// An SRTP crypto-suite name (RFC 4568 §6.2, RFC 7714 §14.1 registered names).
    public struct Suite: Sendable, Hashable, Encodable, CustomStringConvertible {
        /// The name as written (`1*(ALPHA / DIGIT / "_")`, compared exactly).
        public let name: String

        public init(_ name: String) {
            self.name = name
        }

        /// AES-128 counter mode, HMAC-SHA1 tag of 80 bits (RFC 4568 §6.2.1).
        public static let aesCM128HMACSHA1_80 = Suite("AES_CM_128_HMAC_SHA1_80")
        /// AES-128 counter mode, HMAC-SHA1 tag of 32 bits on SRTP, 80 on SRTCP (RFC 4568 §6.2.2).
        public static let aesCM128HMACSHA1_32 = Suite("AES_CM_128_HMAC_SHA1_32")
        /// AES-128 in Galois/counter mode (RFC 7714 §14.1; key and salt per §12).
        public static let aeadAES128GCM = Suite("AEAD_AES_128_GCM")

        /// Master key length in bytes, for the suites this module knows.
        public var masterKeyLength: Int? {
            switch self {
            case .aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32, .aeadAES128GCM: 16
            default: nil
            }
        }

        /// Master salt length in bytes: 112 bits for AES-CM (RFC 4568 §6.2), 96 for GCM
        /// (RFC 7714 §12).
        public var masterSaltLength: Int? {
            switch self {
            case .aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32: 14
            case .aeadAES128GCM: 12
            default: nil
            }
        }

        /// Length of an inline key: master key then master salt; nil for unknown suites.
        public var keySaltLength: Int? {
            guard let key = masterKeyLength, let salt = masterSaltLength else { return nil }
            return key + salt
        }

        /// Whether this module knows the suite's key and salt lengths.
        public var isKnown: Bool { keySaltLength != nil }

        public var description: String { name }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(name)
        }
    }

    /// How many packets a master key may protect (RFC 4568 §6.1), as written.
    public enum Lifetime: Sendable, Hashable, Encodable, CustomStringConvertible {
        /// `2^<exponent>` packets (exponent 0-64).
        case powerOfTwo(UInt8)
        /// A decimal packet count.
        case packets(UInt64)

        /// The text after the `|`.
        public var description: String {
            switch self {
            case .powerOfTwo(let exponent): "2^\(exponent)"
            case .packets(let count): String(count)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(description)
        }
    }

    /// `|<value>:<length>`: the master key identifier a sender puts in each SRTP packet,
    /// `length` bytes long (1-128, RFC 4568 §6.1).
    public struct MasterKeyIdentifier: Sendable, Hashable, Encodable {
        public var value: UInt64
        public var length: UInt8

        public init(value: UInt64, length: UInt8) {
            self.value = value
            self.length = length
        }
    }

    /// One `inline:` key parameter.
    public struct KeyParameter: Sendable, Hashable, Encodable {
        /// The master key followed by the master salt.
        public var keySalt: [UInt8]
        public var lifetime: Lifetime?
        public var mki: MasterKeyIdentifier?

        public init(keySalt: [UInt8], lifetime: Lifetime? = nil, mki: MasterKeyIdentifier? = nil) {
            self.keySalt = keySalt
            self.lifetime = lifetime
            self.mki = mki
        }

        /// `inline:<base64>[|lifetime][|value:length]`.
        public var text: String {
            var out = "inline:" + Base64.encode(keySalt)
            if let lifetime { out += "|\(lifetime)" }
            if let mki { out += "|\(mki.value):\(mki.length)" }
            return out
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(keySalt.count, forKey: .keySaltLength)
            try c.encode(lifetime, forKey: .lifetime)
            try c.encode(mki, forKey: .mki)
        }

        private enum CodingKeys: String, CodingKey { case keySaltLength, lifetime, mki }
    }

    /// The largest tag: `1*9DIGIT`.
    public static let maximumTag: UInt32 = 999_999_999
    /// Most key parameters read from one line; each needs an MKI to be told apart, and
    /// real offers carry one.
    public static let maximumKeyParameters = 16

    /// Identifies this line within its media section; the answer echoes the tag it picks.
    public var tag: UInt32
    public var suite: Suite
    /// At least one.
    public var keys: [KeyParameter]
    /// Session parameters (RFC 4568 §6.3) as written, e.g. `KDR=0`, `UNENCRYPTED_SRTCP`.
    public var sessionParameters: [String]

    public init(tag: UInt32, suite: Suite, keys: [KeyParameter], sessionParameters: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.keys = keys
        self.sessionParameters = sessionParameters
    }

    public init(attributeValue: String) throws(SDPError) {
        let fields = SDPText.looseFields(Substring(attributeValue))
        guard fields.count >= 3 else {
            throw .malformed(Self.self, "expected <tag> <crypto-suite> inline:<key||salt> [<session parameters>], found \(SDPText.quote(attributeValue))")
        }
        guard fields[0].utf8.count <= 9, let tag = SDPText.decimal(fields[0], as: UInt32.self) else {
            throw .malformed(Self.self, "tag \(SDPText.quote(fields[0])) is not a number of 1-9 digits")
        }
        guard !fields[1].isEmpty, fields[1].utf8.allSatisfy(Self.isSuiteByte) else {
            throw .malformed(Self.self, "crypto-suite \(SDPText.quote(fields[1])) is not letters, digits and underscores")
        }
        let suite = Suite(String(fields[1]))
        let pieces = SDPText.split(fields[2], on: UInt8(ascii: ";"))
        guard pieces.count <= Self.maximumKeyParameters else {
            throw .malformed(Self.self, "\(pieces.count) key parameters; at most \(Self.maximumKeyParameters) are read")
        }
        var keys: [KeyParameter] = []
        for piece in pieces { keys.append(try Self.keyParameter(piece, suite: suite)) }
        var sessionParameters: [String] = []
        for field in fields[3...] {
            try Self.checkSessionParameter(field)
            sessionParameters.append(String(field))
        }
        self.init(tag: tag, suite: suite, keys: keys, sessionParameters: sessionParameters)
    }

    public var attributeValue: String {
        var out = "\(tag) \(suite.name) " + keys.map(\.text).joined(separator: ";")
        for parameter in sessionParameters { out += " " + parameter }
        return out
    }

    /// Session parameters that change how SRTP runs in a way this package does not:
    /// `UNENCRYPTED_SRTP`, `UNENCRYPTED_SRTCP`, `UNAUTHENTICATED_SRTP`, a key derivation rate
    /// other than 0, `FEC_KEY`, and any parameter RFC 4568 does not define. A line with one
    /// is unusable (RFC 4568 §6.3: its offerer requires them). `FEC_ORDER` (no FEC is ever
    /// negotiated here) and `WSH` (a replay window hint) change nothing and are not listed.
    public var unsupportedSessionParameters: [String] {
        sessionParameters.filter { parameter in
            if parameter == "KDR=0" || parameter.hasPrefix("FEC_ORDER=") || parameter.hasPrefix("WSH=") { return false }
            return true
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(tag, forKey: .tag)
        try c.encode(suite, forKey: .suite)
        try c.encode(keys, forKey: .keys)
        try c.encode(sessionParameters, forKey: .sessionParameters)
    }

    private enum CodingKeys: String, CodingKey { case tag, suite, keys, sessionParameters }

    // MARK: Reading the pieces

    private static func isSuiteByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// `inline:<key||salt>[|lifetime][|mki:length]` (RFC 4568 §9.2).
    private static func keyParameter(_ text: Substring, suite: Suite) throws(SDPError) -> KeyParameter {
        guard let colon = SDPText.firstIndex(of: UInt8(ascii: ":"), in: text) else {
            throw .malformed(Self.self, "key parameter \(SDPText.quote(text)) is not <key method>:<key info>")
        }
        let method = SDPText.before(colon, in: text)
        guard method == "inline" else {
            throw .malformed(Self.self, "key method \(SDPText.quote(method)) is not inline, the only one SRTP defines (RFC 4568 §6.1)")
        }
        let parts = SDPText.split(SDPText.after(colon, in: text), on: UInt8(ascii: "|"))
        guard parts.count <= 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw .malformed(Self.self, "key info \(SDPText.quote(text)) is not <key||salt>[|<lifetime>][|<MKI>:<length>]")
        }
        let keySalt = try decodeKey(parts[0])
        if let expected = suite.keySaltLength, keySalt.count != expected {
            throw .malformed(Self.self, "\(suite.name) takes a \(expected)-byte key||salt, the inline key has \(keySalt.count) bytes")
        }
        var lifetime: Lifetime? = nil
        var mki: MasterKeyIdentifier? = nil
        for (index, part) in parts.enumerated().dropFirst() {
            if SDPText.firstIndex(of: UInt8(ascii: ":"), in: part) != nil {
                mki = try masterKeyIdentifier(part)
            } else {
                // The lifetime comes before the MKI, never after it.
                guard index == 1 else {
                    throw .malformed(Self.self, "\(SDPText.quote(part)) after the key is neither a lifetime before the MKI nor an MKI")
                }
                lifetime = try self.lifetime(part)
            }
        }
        if parts.count == 3, lifetime == nil || mki == nil {
            throw .malformed(Self.self, "key info \(SDPText.quote(text)) has three parts but not <key>|<lifetime>|<MKI>:<length>")
        }
        return KeyParameter(keySalt: keySalt, lifetime: lifetime, mki: mki)
    }

    private static func decodeKey(_ text: Substring) throws(SDPError) -> [UInt8] {
        var padded = String(text)
        switch text.utf8.count % 4 {
        case 2: padded += "=="
        case 3: padded += "="
        default: break
        }
        do {
            return try Base64.decode(padded)
        } catch {
            throw .malformed(Self.self, "inline key \(SDPText.quote(text)) is not base64: \(error.reason)")
        }
    }

    /// `2^<exponent>` or a decimal packet count.
    private static func lifetime(_ text: Substring) throws(SDPError) -> Lifetime {
        if text.hasPrefix("2^") {
            guard let exponent = SDPText.decimal(text.dropFirst(2), as: UInt8.self), exponent <= 64 else {
                throw .malformed(Self.self, "lifetime \(SDPText.quote(text)) is not 2^<0-64>")
            }
            return .powerOfTwo(exponent)
        }
        guard let count = SDPText.decimal(text, as: UInt64.self) else {
            throw .malformed(Self.self, "lifetime \(SDPText.quote(text)) is not 2^<n> or a packet count")
        }
        return .packets(count)
    }

    /// `<value>:<length>`: length 1-128 bytes, and the value must fit in it.
    private static func masterKeyIdentifier(_ text: Substring) throws(SDPError) -> MasterKeyIdentifier {
        let halves = SDPText.split(text, on: UInt8(ascii: ":"))
        guard halves.count == 2, let value = SDPText.decimal(halves[0], as: UInt64.self),
              halves[1].utf8.count <= 3, let length = SDPText.decimal(halves[1], as: UInt8.self), (1...128).contains(length) else {
            throw .malformed(Self.self, "MKI \(SDPText.quote(text)) is not <value>:<length of 1-128 bytes>")
        }
        if length < 8, value >> (8 * UInt64(length)) != 0 {
            throw .malformed(Self.self, "MKI value \(value) does not fit in \(length) bytes")
        }
        return MasterKeyIdentifier(value: value, length: length)
    }

    /// Visible characters; the parameters RFC 4568 §9.2 defines must have their grammar.
    private static func checkSessionParameter(_ text: Substring) throws(SDPError) {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .malformed(Self.self, "session parameter \(SDPText.quote(text)) is not visible characters")
        }
        if text.hasPrefix("KDR=") {
            let value = text.dropFirst(4)
            guard value.utf8.count <= 2, let rate = SDPText.decimal(value, as: UInt8.self), rate <= 24 else {
                throw .malformed(Self.self, "\(SDPText.quote(text)): the key derivation rate is 2^<0-24> (RFC 4568 §6.3)")
            }
        } else if text.hasPrefix("WSH=") {
            guard let window = SDPText.decimal(text.dropFirst(4), as: UInt32.self), window >= 64 else {
                throw .malformed(Self.self, "\(SDPText.quote(text)): the window size hint is at least 64 (RFC 4568 §6.3)")
            }
        } else if text.hasPrefix("FEC_ORDER=") {
            guard text == "FEC_ORDER=FEC_SRTP" || text == "FEC_ORDER=SRTP_FEC" else {
                throw .malformed(Self.self, "\(SDPText.quote(text)): FEC_ORDER is FEC_SRTP or SRTP_FEC (RFC 4568 §6.3)")
            }
        }
    }
}
