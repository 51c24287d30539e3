/// Text from a hostile frame, made safe to put in a one-line error message: in double
/// quotes, control and non-ASCII characters escaped as `\u{...}`, cut after 64 characters.
func quoted(_ text: String) -> String {
    var out = "\""
    var count = 0
    for scalar in text.unicodeScalars {
        if count == 64 {
            out += "\u{2026}"
            break
        }
        out += displayScalar(scalar)
        count += 1
    }
    return out + "\""
}

/// One character for an error message: printable ASCII as itself, anything else as `\u{hex}`.
func displayScalar(_ scalar: Unicode.Scalar) -> String {
    switch scalar.value {
    case 0x22: return "\\\""
    case 0x5C: return "\\\\"
    case 0x20...0x7E: return String(scalar)
    default: return "\\u{" + String(scalar.value, radix: 16) + "}"
    }
}
