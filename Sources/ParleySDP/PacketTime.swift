/// `a=ptime:<milliseconds>` (RFC 8866 §6.4): the packet duration the sender would
/// like to receive. Fractions are allowed by the RFC (`a=ptime:22.5`).
public struct PacketTime: SDPAttributeValue {
    public static let attributeName = "ptime"
    /// Milliseconds.
    public var milliseconds: Double

    public init(milliseconds: Double) { self.milliseconds = milliseconds }

    public init(attributeValue: String) throws(SDPError) {
        self.init(milliseconds: try parseMilliseconds(attributeValue, for: Self.self))
    }

    public var attributeValue: String { formatMilliseconds(milliseconds) }
}

/// `a=maxptime:<milliseconds>` (RFC 8866 §6.5): the longest packet the sender can
/// receive.
public struct MaxPacketTime: SDPAttributeValue {
    public static let attributeName = "maxptime"
    /// Milliseconds.
    public var milliseconds: Double

    public init(milliseconds: Double) { self.milliseconds = milliseconds }

    public init(attributeValue: String) throws(SDPError) {
        self.init(milliseconds: try parseMilliseconds(attributeValue, for: Self.self))
    }

    public var attributeValue: String { formatMilliseconds(milliseconds) }
}

/// Digits with at most one decimal point; no signs, exponents, NaN or infinity.
private func parseMilliseconds<T: SDPAttributeValue>(_ text: String, for type: T.Type) throws(SDPError) -> Double {
    let parts = SDPText.split(text, on: UInt8(ascii: "."))
    guard parts.count <= 2, SDPText.isDigits(parts[0]), parts.count == 1 || SDPText.isDigits(parts[1]),
          text.utf8.count <= 20, let value = Double(text), value.isFinite
    else {
        throw .malformed(T.self, "\(SDPText.quote(text)) is not a number of milliseconds")
    }
    return value
}

private func formatMilliseconds(_ value: Double) -> String {
    // Plain text manipulation: rounding functions would pull in libm, which products
    // without Foundation do not link.
    var text = String(value)
    if text.hasSuffix(".0") { text.removeLast(2) }
    return text
}
