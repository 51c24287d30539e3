/// `a=candidate:` (RFC 8839 §5.1):
///
/// ```
/// candidate:<foundation> <component-id> <transport> <priority>
///           <connection-address> <port> typ <cand-type>
///           [raddr <rel-addr>] [rport <rel-port>] *(<extension-name> <extension-value>)
/// ```
///
/// Extension pairs (`generation`, `ufrag`, `network-id`, `network-cost`, `tcptype`
/// from RFC 6544, and any unknown ones) are kept in order; typed accessors read the
/// common ones.
public struct ICECandidate: SDPAttributeValue {
    public static let attributeName = "candidate"

    /// What kind of address `address` is.
    public enum AddressKind: String, Sendable, Hashable, Encodable {
        case ipv4, ipv6
        /// A host name; `.local` names are mDNS-obfuscated host candidates.
        case fqdn
    }

    /// RFC 8839 §5.1 `cand-type`; other values are kept in `.other`.
    public enum CandidateType: Sendable, Hashable, Encodable, CustomStringConvertible {
        case host, serverReflexive, peerReflexive, relayed
        case other(String)

        init(_ text: String) {
            switch text {
            case "host": self = .host
            case "srflx": self = .serverReflexive
            case "prflx": self = .peerReflexive
            case "relay": self = .relayed
            default: self = .other(text)
            }
        }

        /// The SDP token: `host`, `srflx`, `prflx`, `relay`.
        public var description: String {
            switch self {
            case .host: "host"
            case .serverReflexive: "srflx"
            case .peerReflexive: "prflx"
            case .relayed: "relay"
            case .other(let text): text
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(description)
        }
    }

    /// One `<name> <value>` extension pair.
    public struct Extension: Sendable, Hashable, Encodable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// 1-32 ice-chars.
    public var foundation: String
    /// 1 for RTP (and muxed RTCP), 2 for separate RTCP; 1-256.
    public var component: UInt16
    /// As written: `udp`, `UDP`, `tcp`, ...
    public var transport: String
    public var priority: UInt32
    /// IPv4, IPv6 or a host name (mDNS `.local` names included), as written.
    public var address: String
    public var port: UInt16
    public var type: CandidateType
    /// `raddr`, for reflexive and relayed candidates.
    public var relatedAddress: String?
    /// `rport`.
    public var relatedPort: UInt16?
    /// Everything after `raddr`/`rport`, in order.
    public var extensions: [Extension]

    public init(
        foundation: String, component: UInt16 = 1, transport: String = "udp", priority: UInt32,
        address: String, port: UInt16, type: CandidateType = .host,
        relatedAddress: String? = nil, relatedPort: UInt16? = nil, extensions: [Extension] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.type = type
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.extensions = extensions
    }

    /// Parses the attribute value; a leading `candidate:` (as in trickled candidate
    /// strings from `RTCIceCandidate.candidate`) is accepted too.
    public init(attributeValue: String) throws(SDPError) {
        var text = Substring(attributeValue)
        if text.hasPrefix("candidate:") { text = text.dropFirst("candidate:".count) }
        let fields = SDPText.looseFields(text)
        guard fields.count >= 8 else {
            throw .malformed(Self.self, "expected at least 8 fields (<foundation> <component> <transport> <priority> <address> <port> typ <type>), found \(fields.count)")
        }
        guard fields[0].utf8.count <= 32, fields[0].utf8.allSatisfy(Self.isICEChar) else {
            throw .malformed(Self.self, "foundation \(SDPText.quote(fields[0])) is not 1-32 ice-chars")
        }
        guard let component = SDPText.decimal(fields[1], as: UInt16.self), (1...256).contains(component) else {
            throw .malformed(Self.self, "component \(SDPText.quote(fields[1])) is not a number 1-256")
        }
        guard SDPText.isToken(fields[2]) else {
            throw .malformed(Self.self, "transport \(SDPText.quote(fields[2])) is not a token")
        }
        guard let priority = SDPText.decimal(fields[3], as: UInt32.self) else {
            throw .malformed(Self.self, "priority \(SDPText.quote(fields[3])) is not a number 0-4294967295")
        }
        guard Self.addressKind(of: fields[4]) != nil else {
            throw .malformed(Self.self, "address \(SDPText.quote(fields[4])) is not IPv4, IPv6 or a host name")
        }
        guard let port = SDPText.decimal(fields[5], as: UInt16.self) else {
            throw .malformed(Self.self, "port \(SDPText.quote(fields[5])) is not a number 0-65535")
        }
        guard fields[6] == "typ" else {
            throw .malformed(Self.self, "expected \"typ\" after the port, found \(SDPText.quote(fields[6]))")
        }
        guard SDPText.isToken(fields[7]) else {
            throw .malformed(Self.self, "candidate type \(SDPText.quote(fields[7])) is not a token")
        }
        var index = 8
        var relatedAddress: String? = nil
        var relatedPort: UInt16? = nil
        if index + 1 < fields.count, fields[index] == "raddr" {
            guard Self.addressKind(of: fields[index + 1]) != nil else {
                throw .malformed(Self.self, "raddr \(SDPText.quote(fields[index + 1])) is not IPv4, IPv6 or a host name")
            }
            relatedAddress = String(fields[index + 1])
            index += 2
        }
        if index + 1 < fields.count, fields[index] == "rport" {
            guard let number = SDPText.decimal(fields[index + 1], as: UInt16.self) else {
                throw .malformed(Self.self, "rport \(SDPText.quote(fields[index + 1])) is not a number 0-65535")
            }
            relatedPort = number
            index += 2
        }
        guard (fields.count - index) % 2 == 0 else {
            throw .malformed(Self.self, "extension \(SDPText.quote(fields[fields.count - 1])) has no value")
        }
        var extensions: [Extension] = []
        while index + 1 < fields.count {
            extensions.append(Extension(name: String(fields[index]), value: String(fields[index + 1])))
            index += 2
        }
        self.init(foundation: String(fields[0]), component: component, transport: String(fields[2]), priority: priority,
                  address: String(fields[4]), port: port, type: CandidateType(String(fields[7])),
                  relatedAddress: relatedAddress, relatedPort: relatedPort, extensions: extensions)
    }

    public var attributeValue: String {
        var out = "\(foundation) \(component) \(transport) \(priority) \(address) \(port) typ \(type)"
        if let relatedAddress { out += " raddr " + relatedAddress }
        if let relatedPort { out += " rport \(relatedPort)" }
        for item in extensions { out += " \(item.name) \(item.value)" }
        return out
    }

    /// The value of extension `name`, if present.
    public func extensionValue(_ name: String) -> String? {
        extensions.first { $0.name == name }?.value
    }

    /// `tcptype active|passive|so` (RFC 6544 §4.5).
    public var tcpType: String? { extensionValue("tcptype") }
    /// Chromium's `generation`.
    public var generation: UInt32? { extensionValue("generation").flatMap { SDPText.decimal(Substring($0), as: UInt32.self) } }
    /// `ufrag` of the ICE generation this candidate belongs to.
    public var usernameFragment: String? { extensionValue("ufrag") }
    /// Chromium's `network-id`.
    public var networkID: UInt32? { extensionValue("network-id").flatMap { SDPText.decimal(Substring($0), as: UInt32.self) } }
    /// Chromium's `network-cost`.
    public var networkCost: UInt32? { extensionValue("network-cost").flatMap { SDPText.decimal(Substring($0), as: UInt32.self) } }

    /// True for UDP candidates (case-insensitive: Firefox writes `UDP`).
    public var isUDP: Bool { transport.lowercased() == "udp" }
    /// What kind of address `address` is.
    public var addressKind: AddressKind { Self.addressKind(of: Substring(address)) ?? .fqdn }
    /// True for an mDNS host name (RFC 8839 §5.1 allows FQDNs; browsers hide host
    /// addresses behind `<uuid>.local`).
    public var isMDNS: Bool { addressKind == .fqdn && address.lowercased().hasSuffix(".local") }

    /// RFC 8839 §5.1 `ice-char`: ALPHA / DIGIT / "+" / "/".
    static func isICEChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "/"): return true
        default: return false
        }
    }

    static func addressKind(of text: Substring) -> AddressKind? {
        if IPAddressText.isIPv4(text) { return .ipv4 }
        if IPAddressText.isIPv6(text) { return .ipv6 }
        if IPAddressText.isHostName(text) { return .fqdn }
        return nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(foundation, forKey: .foundation)
        try c.encode(component, forKey: .component)
        try c.encode(transport, forKey: .transport)
        try c.encode(priority, forKey: .priority)
        try c.encode(address, forKey: .address)
        try c.encode(addressKind, forKey: .addressKind)
        try c.encode(port, forKey: .port)
        try c.encode(type, forKey: .type)
        try c.encode(relatedAddress, forKey: .relatedAddress)
        try c.encode(relatedPort, forKey: .relatedPort)
        try c.encode(extensions, forKey: .extensions)
    }

    private enum CodingKeys: String, CodingKey {
        case foundation, component, transport, priority, address, addressKind, port, type, relatedAddress, relatedPort, extensions
    }
}

/// Syntax checks for address text; no resolution, no I/O.
enum IPAddressText {
    /// Dotted quad, each part 0-255 without leading zeros beyond "0".
    static func isIPv4(_ text: Substring) -> Bool {
        let parts = SDPText.split(text, on: UInt8(ascii: "."))
        guard parts.count == 4 else { return false }
        for part in parts {
            guard part.utf8.count <= 3, let value = SDPText.decimal(part, as: UInt16.self), value <= 255 else { return false }
            if part.utf8.count > 1, part.utf8.first == UInt8(ascii: "0") { return false }
        }
        return true
    }

    /// RFC 4291 §2.2 text forms: eight groups of 1-4 hex digits, or fewer with one
    /// `::`, the last two groups optionally written as a dotted quad; a `%zone` suffix
    /// is accepted.
    static func isIPv6(_ input: Substring) -> Bool {
        var text = input
        if let percent = SDPText.firstIndex(of: UInt8(ascii: "%"), in: text) {
            guard text.utf8.index(after: percent) < text.endIndex else { return false }
            text = SDPText.before(percent, in: text)
        }
        let bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes.count <= 45, bytes.contains(UInt8(ascii: ":")) else { return false }
        var doubleColon: Int? = nil
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: ":") {
                guard doubleColon == nil else { return false }
                doubleColon = index
                index += 2
            } else {
                index += 1
            }
        }
        // Number of 16-bit groups in a run like "a:b:1.2.3.4", nil when malformed.
        func groupCount(_ part: ArraySlice<UInt8>, dottedQuadLast: Bool) -> Int? {
            if part.isEmpty { return 0 }
            let groups = part.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            var count = 0
            for (position, group) in groups.enumerated() {
                if dottedQuadLast, position == groups.count - 1, group.contains(UInt8(ascii: ".")) {
                    guard isIPv4(Substring(decoding: group, as: UTF8.self)) else { return nil }
                    count += 2
                    continue
                }
                guard (1...4).contains(group.count), group.allSatisfy(SDPText.isHexDigit) else { return nil }
                count += 1
            }
            return count
        }
        if let doubleColon {
            guard let head = groupCount(bytes[..<doubleColon], dottedQuadLast: false),
                  let tail = groupCount(bytes[(doubleColon + 2)...], dottedQuadLast: true) else { return false }
            return head + tail <= 7
        }
        return groupCount(bytes[...], dottedQuadLast: true) == 8
    }

    /// A DNS name: dot-separated labels of letters, digits and hyphens (1-63 bytes, no
    /// leading or trailing hyphen), 253 bytes at most; at least one letter somewhere,
    /// so a mangled IPv4 address is not taken for a name.
    static func isHostName(_ text: Substring) -> Bool {
        var text = text
        if text.hasSuffix(".") { text = text.dropLast() }
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        var hasLetter = false
        for label in SDPText.split(text, on: UInt8(ascii: ".")) {
            guard !label.isEmpty, label.utf8.count <= 63, label.utf8.first != UInt8(ascii: "-"), label.utf8.last != UInt8(ascii: "-") else { return false }
            for byte in label.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): hasLetter = true
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): break
                default: return false
                }
            }
        }
        return hasLetter
    }
}
