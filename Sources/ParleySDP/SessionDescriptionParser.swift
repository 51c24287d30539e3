/// Line-level SDP parser (RFC 8866 §5). One pass over the bytes; each line is checked
/// for its type letter, its place in the order of §5, and its own grammar. Attribute
/// values are kept as text here; their typed views parse on demand.
enum SessionDescriptionParser {
    /// Rank of a session-level line in the fixed order of RFC 8866 §5
    /// (v o s i u e p c b t r z k a), nil for letters that are not session-level.
    private static func sessionRank(_ type: UInt8) -> Int? {
        switch type {
        case UInt8(ascii: "v"): 0
        case UInt8(ascii: "o"): 1
        case UInt8(ascii: "s"): 2
        case UInt8(ascii: "i"): 3
        case UInt8(ascii: "u"): 4
        case UInt8(ascii: "e"): 5
        case UInt8(ascii: "p"): 6
        case UInt8(ascii: "c"): 7
        case UInt8(ascii: "b"): 8
        case UInt8(ascii: "t"), UInt8(ascii: "r"): 9
        case UInt8(ascii: "z"): 10
        case UInt8(ascii: "k"): 11
        case UInt8(ascii: "a"): 12
        default: nil
        }
    }

    /// Rank of a media-level line (m i c b k a).
    private static func mediaRank(_ type: UInt8) -> Int? {
        switch type {
        case UInt8(ascii: "i"): 1
        case UInt8(ascii: "c"): 2
        case UInt8(ascii: "b"): 3
        case UInt8(ascii: "k"): 4
        case UInt8(ascii: "a"): 5
        default: nil
        }
    }

    /// Lines that may appear more than once in their section.
    private static func isRepeatable(_ type: UInt8) -> Bool {
        switch type {
        case UInt8(ascii: "e"), UInt8(ascii: "p"), UInt8(ascii: "c"), UInt8(ascii: "b"), UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "a"): true
        default: false
        }
    }

    /// One bit per letter a-z, for "seen in this section".
    private static func bit(_ type: UInt8) -> UInt32 { 1 << UInt32(type &- UInt8(ascii: "a")) }

    static func parse(_ bytes: [UInt8], limits: SDPLimits) throws(SDPError) -> SessionDescription {
        guard bytes.count <= limits.maxBytes else {
            throw SDPError(.inputTooLarge, line: nil, "description is \(bytes.count) bytes, more than the limit of \(limits.maxBytes)")
        }
        var lines: [(number: Int, type: UInt8, value: String)] = []
        try splitLines(bytes, limits: limits, into: &lines)
        guard !lines.isEmpty else {
            throw SDPError(.missingLine, line: nil, "empty description: expected a v= line")
        }

        // RFC 8866 §5: v, o and s come first, in that order.
        let required: [(UInt8, String)] = [(UInt8(ascii: "v"), "v="), (UInt8(ascii: "o"), "o="), (UInt8(ascii: "s"), "s=")]
        for (index, (type, name)) in required.enumerated() {
            guard index < lines.count else {
                throw SDPError(.missingLine, line: nil, "description ends before its \(name) line")
            }
            guard lines[index].type == type else {
                throw SDPError(.missingLine, line: lines[index].number, "expected a \(name) line, found \(letter(lines[index].type))=")
            }
        }
        guard lines[0].value == "0" else {
            throw SDPError(.malformedLine, line: 1, "unsupported version \(SDPText.quote(lines[0].value)): only v=0 exists")
        }
        var session = SessionDescription(origin: try parseOrigin(lines[1].value, line: lines[1].number), sessionName: lines[2].value, timings: [])

        var rank = 2
        var previousType = UInt8(ascii: "s")
        var seen: UInt32 = bit(UInt8(ascii: "v")) | bit(UInt8(ascii: "o")) | bit(UInt8(ascii: "s"))
        var current: MediaDescription? = nil
        var index = 3
        while index < lines.count {
            let (number, type, value) = lines[index]
            index += 1
            if type == UInt8(ascii: "m") {
                if let finished = current { session.media.append(finished) }
                guard session.media.count < limits.maxMediaSections else {
                    throw SDPError(.tooManyMediaSections, line: number, "more than \(limits.maxMediaSections) media sections")
                }
                current = try parseMedia(value, line: number)
                rank = 0
                seen = 0
                previousType = type
                continue
            }
            guard let lineRank = current == nil ? sessionRank(type) : mediaRank(type) else {
                if current != nil, sessionRank(type) != nil {
                    throw SDPError(.lineOutOfOrder, line: number, "\(letter(type))= is a session-level line but appears inside a media section (media-level lines go m i c b k a)")
                }
                throw SDPError(.unknownLineType, line: number, "unknown line type \(letter(type))= (RFC 8866 defines v o s i u e p c b t r z k a m)")
            }
            guard lineRank >= rank else {
                let sequence = current == nil ? "v o s i u e p c b t r z k a m" : "m i c b k a"
                throw SDPError(.lineOutOfOrder, line: number, "\(letter(type))= line out of order (lines go \(sequence))")
            }
            if seen & bit(type) != 0, !isRepeatable(type) {
                throw SDPError(.duplicateLine, line: number, "second \(letter(type))= line in the \(current == nil ? "session" : "media") section")
            }
            if type == UInt8(ascii: "r"), previousType != UInt8(ascii: "t"), previousType != UInt8(ascii: "r") {
                throw SDPError(.lineOutOfOrder, line: number, "r= line must follow a t= line")
            }
            rank = lineRank
            seen |= bit(type)
            previousType = type

            if current != nil {
                try apply(type, value, line: number, to: &current!)
            } else {
                try apply(type, value, line: number, to: &session)
            }
        }
        if let finished = current { session.media.append(finished) }
        return session
    }

    /// Splits into lines (CRLF or LF), validating each as UTF-8 text without NUL or
    /// stray CR, and checks the `x=` shape. Trailing empty lines are ignored.
    private static func splitLines(_ bytes: [UInt8], limits: SDPLimits, into lines: inout [(number: Int, type: UInt8, value: String)]) throws(SDPError) {
        var start = 0
        var number = 0
        while start < bytes.count {
            // One scan finds the line end and notes NUL, CR and non-ASCII bytes.
            var end = start
            var firstControl: UInt8? = nil
            var isASCII = true
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\n") { break }
                if byte == 0 || byte == UInt8(ascii: "\r") {
                    // A CR right before the LF (or the end) is the line ending.
                    let isLineEnding = byte == UInt8(ascii: "\r") && (end + 1 == bytes.count || bytes[end + 1] == UInt8(ascii: "\n"))
                    if !isLineEnding, firstControl == nil { firstControl = byte }
                }
                if byte >= 0x80 { isASCII = false }
                end += 1
            }
            let next = end + 1
            var contentEnd = end
            if contentEnd > start, bytes[contentEnd - 1] == UInt8(ascii: "\r") { contentEnd -= 1 }
            number += 1
            if contentEnd == start {
                // An empty line is only acceptable as trailing padding.
                var rest = next
                while rest < bytes.count, bytes[rest] == UInt8(ascii: "\r") || bytes[rest] == UInt8(ascii: "\n") { rest += 1 }
                if rest >= bytes.count { return }
                throw SDPError(.malformedLine, line: number, "empty line")
            }
            guard number <= limits.maxLines else {
                throw SDPError(.tooManyLines, line: number, "more than \(limits.maxLines) lines")
            }
            if let firstControl {
                throw SDPError(.invalidText, line: number, firstControl == 0 ? "NUL byte in line" : "carriage return inside a line")
            }
            guard contentEnd - start >= 2, bytes[start + 1] == UInt8(ascii: "=") else {
                throw SDPError(.malformedLine, line: number, "line does not start with a type letter and '='")
            }
            let type = bytes[start]
            guard type >= UInt8(ascii: "a"), type <= UInt8(ascii: "z") else {
                throw SDPError(.malformedLine, line: number, "type \(letter(type)) is not a lowercase letter")
            }
            let valueBytes = bytes[(start + 2)..<contentEnd]
            let value: String
            if isASCII {
                value = String(decoding: valueBytes, as: UTF8.self)  // nothing to validate
            } else if let decoded = String(validating: valueBytes, as: UTF8.self) {
                value = decoded
            } else {
                throw SDPError(.invalidText, line: number, "line is not valid UTF-8")
            }
            lines.append((number, type, value))
            start = next
        }
    }

    private static func letter(_ byte: UInt8) -> String {
        if byte >= 0x21, byte < 0x7F { return String(UnicodeScalar(byte)) }
        return "0x" + String(byte, radix: 16)
    }

    private static func apply(_ type: UInt8, _ value: String, line: Int, to session: inout SessionDescription) throws(SDPError) {
        switch type {
        case UInt8(ascii: "i"): session.information = value
        case UInt8(ascii: "u"): session.uri = value
        case UInt8(ascii: "e"): session.emails.append(value)
        case UInt8(ascii: "p"): session.phones.append(value)
        case UInt8(ascii: "c"): session.connection = try parseConnection(value, line: line)
        case UInt8(ascii: "b"): session.bandwidths.append(try parseBandwidth(value, line: line))
        case UInt8(ascii: "t"): session.timings.append(try parseTiming(value, line: line))
        case UInt8(ascii: "r"):
            guard !value.isEmpty else { throw SDPError(.malformedLine, line: line, "empty r= line") }
            // Ordering checks guarantee a t= line precedes.
            if !session.timings.isEmpty { session.timings[session.timings.count - 1].repeats.append(value) }
        case UInt8(ascii: "z"): session.timeZones = value
        case UInt8(ascii: "k"): session.encryptionKey = value
        default: session.attributes.append(try parseAttribute(value, line: line))
        }
    }

    private static func apply(_ type: UInt8, _ value: String, line: Int, to media: inout MediaDescription) throws(SDPError) {
        switch type {
        case UInt8(ascii: "i"): media.information = value
        case UInt8(ascii: "c"): media.connections.append(try parseConnection(value, line: line))
        case UInt8(ascii: "b"): media.bandwidths.append(try parseBandwidth(value, line: line))
        case UInt8(ascii: "k"): media.encryptionKey = value
        default: media.attributes.append(try parseAttribute(value, line: line))
        }
    }

    // MARK: Individual line grammars

    /// RFC 8866 §5.2.
    static func parseOrigin(_ value: String, line: Int) throws(SDPError) -> SessionDescription.Origin {
        let fields = SDPText.fields(Substring(value))
        guard fields.count == 6 else {
            throw SDPError(.malformedLine, line: line, "malformed o= line: expected 6 space-separated fields, found \(fields.count)")
        }
        for (field, name) in zip(fields, ["username", "session id", "session version", "network type", "address type", "address"]) {
            guard SDPText.isNonSpaceText(field) else {
                throw SDPError(.malformedLine, line: line, "malformed o= line: empty or invalid \(name)")
            }
        }
        guard SDPText.isDigits(fields[1]) else {
            throw SDPError(.malformedLine, line: line, "malformed o= line: session id \(SDPText.quote(fields[1])) is not a number")
        }
        guard SDPText.isDigits(fields[2]) else {
            throw SDPError(.malformedLine, line: line, "malformed o= line: session version \(SDPText.quote(fields[2])) is not a number")
        }
        return .init(username: String(fields[0]), sessionID: String(fields[1]), sessionVersion: String(fields[2]),
                     networkType: String(fields[3]), addressType: String(fields[4]), address: String(fields[5]))
    }

    /// RFC 8866 §5.7.
    static func parseConnection(_ value: String, line: Int) throws(SDPError) -> SessionDescription.Connection {
        let fields = SDPText.fields(Substring(value))
        guard fields.count == 3, fields.allSatisfy(SDPText.isNonSpaceText) else {
            throw SDPError(.malformedLine, line: line, "malformed c= line: expected <nettype> <addrtype> <address>, found \(SDPText.quote(value))")
        }
        return .init(networkType: String(fields[0]), addressType: String(fields[1]), address: String(fields[2]))
    }

    /// RFC 8866 §5.8.
    static func parseBandwidth(_ value: String, line: Int) throws(SDPError) -> SessionDescription.Bandwidth {
        guard let colon = SDPText.firstIndex(of: UInt8(ascii: ":"), in: value), SDPText.isToken(SDPText.before(colon, in: value)) else {
            throw SDPError(.malformedLine, line: line, "malformed b= line: expected <type>:<bandwidth>, found \(SDPText.quote(value))")
        }
        guard let amount = SDPText.decimal(SDPText.after(colon, in: value), as: UInt64.self) else {
            throw SDPError(.malformedLine, line: line, "malformed b= line: bandwidth \(SDPText.quote(SDPText.after(colon, in: value))) is not a number")
        }
        return .init(type: String(SDPText.before(colon, in: value)), value: amount)
    }

    /// RFC 8866 §5.9.
    static func parseTiming(_ value: String, line: Int) throws(SDPError) -> SessionDescription.Timing {
        let fields = SDPText.fields(Substring(value))
        guard fields.count == 2, let start = SDPText.decimal(fields[0], as: UInt64.self), let stop = SDPText.decimal(fields[1], as: UInt64.self) else {
            throw SDPError(.malformedLine, line: line, "malformed t= line: expected <start> <stop> as numbers, found \(SDPText.quote(value))")
        }
        return .init(start: start, stop: stop)
    }

    /// RFC 8866 §5.14.
    static func parseMedia(_ value: String, line: Int) throws(SDPError) -> MediaDescription {
        let fields = SDPText.fields(Substring(value))
        guard fields.count >= 3 else {
            throw SDPError(.malformedLine, line: line, "malformed m= line: expected <media> <port> <proto> <fmt>..., found \(SDPText.quote(value))")
        }
        guard SDPText.isToken(fields[0]) else {
            throw SDPError(.malformedLine, line: line, "malformed m= line: media type \(SDPText.quote(fields[0])) is not a token")
        }
        var portText = fields[1]
        var portCount: UInt16? = nil
        if let slash = SDPText.firstIndex(of: UInt8(ascii: "/"), in: portText) {
            guard let count = SDPText.decimal(SDPText.after(slash, in: portText), as: UInt16.self) else {
                throw SDPError(.malformedLine, line: line, "malformed m= line: port count in \(SDPText.quote(portText)) is not a number 0-65535")
            }
            portCount = count
            portText = SDPText.before(slash, in: portText)
        }
        guard let port = SDPText.decimal(portText, as: UInt16.self) else {
            throw SDPError(.malformedLine, line: line, "malformed m= line: port \(SDPText.quote(portText)) is not a number 0-65535")
        }
        guard SDPText.isNonSpaceText(fields[2]) else {
            throw SDPError(.malformedLine, line: line, "malformed m= line: empty protocol")
        }
        let formats = fields.dropFirst(3)
        guard formats.allSatisfy(SDPText.isNonSpaceText) else {
            throw SDPError(.malformedLine, line: line, "malformed m= line: empty format (double or trailing space?)")
        }
        var media = MediaDescription(media: String(fields[0]), port: port, portCount: portCount, proto: String(fields[2]), formats: formats.map(String.init))
        media.line = line
        return media
    }

    /// RFC 8866 §5.13: `a=<name>` or `a=<name>:<value>`. Works on the UTF-8 view:
    /// attributes are most of a description, and Character-level search is slow.
    static func parseAttribute(_ value: String, line: Int) throws(SDPError) -> SDPAttribute {
        let utf8 = value.utf8
        let colon = utf8.firstIndex(of: UInt8(ascii: ":"))
        let nameBytes = utf8[..<(colon ?? utf8.endIndex)]
        guard !nameBytes.isEmpty, nameBytes.allSatisfy(SDPText.isTokenByte) else {
            throw SDPError(.malformedLine, line: line, "malformed a= line: attribute name \(SDPText.quote(Substring(nameBytes))) is empty or not a token")
        }
        let name = String(Substring(nameBytes))
        guard let colon else { return SDPAttribute(name: name, value: nil, line: line) }
        return SDPAttribute(name: name, value: String(Substring(utf8[utf8.index(after: colon)...])), line: line)
    }
}
