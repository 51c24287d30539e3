import ParleyWireCore
// The Codable form of a message is its wire form, so `parley inspect` and logs can print
// a message with JSONEncoder and get exactly what travels, and JSON from elsewhere (a
// test fixture, a log line) decodes with the same checks as a frame.

extension SignalingMessage: Codable {
    /// Decodes the wire form, with the same validation as `SignalingCodec.decode`; throws
    /// `SignalingError` for a value that decodes as JSON but is not a valid message.
    ///
    /// For frames from the network use `SignalingCodec.decode`: it also rejects duplicate
    /// keys, invalid UTF-8 and deep nesting before looking at any field, which a generic
    /// `Decoder` may not.
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        self = try SignalingCodec.message(from: value, sender: nil)
    }

    /// Encodes the wire form: `v`, `type`, then the message's members.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}
