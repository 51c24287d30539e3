public import ParleyWireCore

/// An amount of money, `{"currencyId": "USD", "amount": 0.0100}`: the `userRate` of ICE
/// and the `debit` and `userRate` of DiCE. Parley does not charge; the type exists so a
/// backend written for Sinch reads these fields and a Swift backend can read Sinch's.
public struct Money: Sendable, Hashable {
    /// The ISO 4217 code, when given.
    public var currencyID: String?
    /// The amount as its JSON number literal, kept exact (no binary floating point).
    public let amount: String

    /// An amount from its JSON number literal (`"0.0100"`), refused unless it is one.
    public init(currencyID: String?, amount: String) throws(VoiceAPIError) {
        guard amount.utf8.count <= 64,
              let parsed = try? StrictJSONParser.parse(Array(amount.utf8), maxDepth: 1),
              case .number = parsed else {
            throw VoiceAPIError(.invalidValue, field: "amount", "\(FieldReader.quoted(amount)) is not a JSON number")
        }
        self.currencyID = currencyID
        self.amount = amount
    }

    /// The JSON form.
    public var json: JSONValue {
        var object = JSONObject()
        object.append("currencyId", ifPresent: currencyID)
        object.append("amount", .number(amount))
        return .object(object)
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> Money {
        let currency = try reader.optionalString("currencyId", maxBytes: 16)
        let amount = try reader.optionalNumberLiteral("amount") ?? "0"
        return try Money(currencyID: currency, amount: amount)
    }
}
