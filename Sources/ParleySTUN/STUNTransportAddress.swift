/// An IP address and port, the value of MAPPED-ADDRESS and XOR-MAPPED-ADDRESS.
public struct STUNTransportAddress: Sendable, Hashable, Encodable, CustomStringConvertible {
    public var ip: STUNIPAddress
    public var port: UInt16

    public init(ip: STUNIPAddress, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// Parses the address text (see `STUNIPAddress.init(_:)`); nil if it is not an address.
    public init?(ip text: String, port: UInt16) {
        guard let ip = STUNIPAddress(text) else { return nil }
        self.init(ip: ip, port: port)
    }

    /// `192.0.2.1:32853` or `[2001:db8::1]:32853`.
    public var description: String {
        switch ip {
        case .ipv4: return "\(ip):\(port)"
        case .ipv6: return "[\(ip)]:\(port)"
        }
    }

    private enum CodingKeys: String, CodingKey { case family, address, port }

    /// `{"family": "ipv4", "address": "192.0.2.1", "port": 32853}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch ip {
        case .ipv4: try container.encode("ipv4", forKey: .family)
        case .ipv6: try container.encode("ipv6", forKey: .family)
        }
        try container.encode(ip, forKey: .address)
        try container.encode(port, forKey: .port)
    }
}
