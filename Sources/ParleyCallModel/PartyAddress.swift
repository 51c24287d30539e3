/// Who a call goes to or comes from: a party named by its kind and its address, as
/// docs/protocol.md's "address" defines them (the protocol spells it
/// `SignalingMessage.Address`; its wire form is `{"kind": "user", "address": "alice"}`).
///
/// The value only carries the kind and the text; checking the text against its kind's
/// format is the protocol reader's job (ParleySignaling), where untrusted input arrives.
///
/// JSON (`Codable`): the wire form, `{"kind": "user", "address": "alice"}`.
public enum PartyAddress: Sendable, Hashable, Codable {
    /// An app user, by user id (at most 255 bytes of `A-Z a-z 0-9 - _ =`).
    case user(String)
    /// A phone number in E.164 form with a leading `+`, reached through a SIP trunk.
    case phone(String)
    /// A SIP endpoint, by `sip:` or `sips:` URI.
    case sip(String)
    /// A conference room, by conference id (at most 64 bytes of `A-Z a-z 0-9 - _ =`).
    case conference(String)

    /// The `kind` string on the wire and in records.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        case user, phone, sip, conference
    }

    public var kind: Kind {
        switch self {
        case .user: .user
        case .phone: .phone
        case .sip: .sip
        case .conference: .conference
        }
    }

    /// The user id, number, URI or conference id.
    public var address: String {
        switch self {
        case .user(let value), .phone(let value), .sip(let value), .conference(let value): value
        }
    }

    /// The address of `kind` with text `address`.
    public init(kind: Kind, address: String) {
        switch kind {
        case .user: self = .user(address)
        case .phone: self = .phone(address)
        case .sip: self = .sip(address)
        case .conference: self = .conference(address)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case kind, address
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(kind: try container.decode(Kind.self, forKey: .kind), address: try container.decode(String.self, forKey: .address))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(address, forKey: .address)
    }
}
