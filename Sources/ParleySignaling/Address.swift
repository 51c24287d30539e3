import ParleyWireCore
extension SignalingMessage {
    /// Who a call goes to (`call.start` `to`) or comes from (`call.incoming` `from`).
    ///
    /// Wire form: `{"kind": "user", "address": "alice"}`.
    public enum Address: Sendable, Hashable {
        /// An app user, by user id (at most 255 bytes of `A-Z a-z 0-9 - _ =`).
        case user(String)
        /// A phone number in E.164 form with a leading `+`, reached through a SIP trunk.
        case phone(String)
        /// A SIP endpoint, by `sip:` or `sips:` URI.
        case sip(String)
        /// A conference room, by conference id (at most 64 bytes of `A-Z a-z 0-9 - _ =`).
        case conference(String)

        /// The `kind` string on the wire.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
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

        init(_ reader: FieldReader) throws(SignalingError) {
            let kind = try reader.enumeration("kind", as: Kind.self)
            switch kind {
            case .user: self = .user(try reader.string("address", .userID))
            case .phone: self = .phone(try reader.string("address", .phoneNumber))
            case .sip: self = .sip(try reader.string("address", .sipURI))
            case .conference: self = .conference(try reader.string("address", .conferenceID))
            }
        }

        var json: JSONValue {
            var object = JSONObject()
            object.append("kind", kind.rawValue)
            object.append("address", address)
            return .object(object)
        }
    }
}
