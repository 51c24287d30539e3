/// Writes `Digest name=value, ...` header values, refusing any value that could not be
/// read back as written: a control character in a quoted string (a CR or LF would end
/// the header and let the rest be read as a header of its own), a token parameter whose
/// value is not a token.
struct SIPDigestHeaderWriter {
    private var text = "Digest"
    private var first = true

    /// Appends `name="value"` with `"` and `\` escaped.
    mutating func quoted(_ name: String, _ value: String) throws(SIPDigestError) {
        var escaped = "\""
        for scalar in value.unicodeScalars {
            if (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F {
                throw SIPDigestError(.invalidParameter, "parameter \"\(name)\" holds a control character, which a header cannot carry")
            }
            if scalar == "\"" || scalar == "\\" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        escaped += "\""
        append(name, escaped)
    }

    /// Appends `name=value` unquoted; `value` must be a non-empty token.
    mutating func token(_ name: String, _ value: String) throws(SIPDigestError) {
        try Self.checkToken(name, value)
        append(name, value)
    }

    /// Throws `invalidParameter` unless `value` is a non-empty token.
    static func checkToken(_ name: String, _ value: String) throws(SIPDigestError) {
        guard !value.isEmpty, value.utf8.allSatisfy(SIPDigestParameterList.isTokenByte) else {
            throw SIPDigestError(.invalidParameter, "parameter \"\(name)\" value \"\(SIPDigestError.printable(value))\" is not a token")
        }
    }

    private mutating func append(_ name: String, _ value: String) {
        text += first ? " " : ", "
        first = false
        text += name
        text += "="
        text += value
    }

    var value: String { text }
}
