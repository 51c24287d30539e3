public import ParleyWireCore

/// Where a call goes or came to: `{"type": ..., "endpoint": ...}`, the `to` of ICE and
/// DiCE and the `destination` of `connectMxp` and `connectSip`.
public struct Destination: Sendable, Hashable {
    /// What kind of address ``endpoint`` is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A number of the platform (a DID), dialled from the phone network.
        case did
        /// A phone number on the phone network (E.164).
        case number
        /// An app user (Sinch also writes `userName`; both read as this).
        case username
        /// A SIP address.
        case sip
        /// A conference room.
        case conference
    }

    public var kind: Kind
    /// The number, user id, SIP URI or conference id. A number is sent in E.164 form.
    public var endpoint: String

    public init(kind: Kind, endpoint: String) {
        self.kind = kind
        self.endpoint = endpoint
    }

    /// The JSON form; numbers are written in E.164 (with `+`) when they parse as one.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("type", kind.rawValue)
        object.append("endpoint", Self.sentEndpoint(kind: kind, endpoint))
        return .object(object)
    }

    static func sentEndpoint(kind: Kind, _ endpoint: String) -> String {
        guard kind == .number || kind == .did, let number = try? PhoneNumber(normalizing: endpoint) else { return endpoint }
        return number.e164
    }

    /// Reads a destination object; a number's endpoint is normalised to E.164.
    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> Destination {
        let kind = try reader.enumeration("type", as: Kind.self)
        var endpoint = try reader.string("endpoint", maxBytes: VoiceAPILimits.maxTextBytes)
        if kind == .number || kind == .did {
            do throws(VoiceAPIError) {
                endpoint = try PhoneNumber(normalizing: endpoint).e164
            } catch {
                throw VoiceAPIError(.invalidPhoneNumber, field: reader.fieldPath("endpoint"), error.reason)
            }
        }
        return Destination(kind: kind, endpoint: endpoint)
    }
}
