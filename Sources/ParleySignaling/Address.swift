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

    /// Why the address's text does not fit its kind's format (docs/protocol.md, "Field
    /// formats"), or nil when it does: the rule the protocol reader applies, for an address
    /// built in code rather than read from a frame.
    public var formatProblem: String? {
        let rule: TextRule =
            switch kind {
            case .user: .userID
            case .phone: .phoneNumber
            case .sip: .sipURI
            case .conference: .conferenceID
            }
        do throws(TextRule.Failure) {
            try rule.check(address)
            return nil
        } catch {
            return error.reason
        }
    }

    var json: JSONValue {
        var object = JSONObject()
        object.append("kind", kind.rawValue)
        object.append("address", address)
        return .object(object)
    }
}
