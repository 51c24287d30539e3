public import ParleyCallModel
import ParleyWireCore

extension SignalingMessage {
    /// Who a call goes to (`call.start` `to`) or comes from (`call.incoming` `from`): the
    /// call model's `PartyAddress`.
    ///
    /// Wire form: `{"kind": "user", "address": "alice"}`.
    public typealias Address = PartyAddress
}

extension PartyAddress {
    /// Reads an address, checking its text against its kind's format.
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
