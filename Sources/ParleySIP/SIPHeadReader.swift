import ParleyWireCore

/// Reads the head of a SIP message (or the header block of a body part) into its start
/// line and header fields: lines end in CRLF, a line starting with SP or HTAB continues
/// the field before it (RFC 3261 §7.3.1), `name HCOLON value`.
///
/// It does not stop at the first bad line: every well-formed field is kept, so the
/// Content-Length can still frame a stream and a 400 can still copy Via, From, To,
/// Call-ID and CSeq; the first problem is reported beside them. A limit stops reading.
struct SIPHeadReader {
    /// What was read.
    struct Head {
        /// The first line (empty for a header block without one).
        var startLine: ArraySlice<UInt8> = []
        /// Whether the start line is a Status-Line (`SIP/...`).
        var isResponse = false
        var fields: [SIPHeaders.Field] = []
        /// Byte offset (from the start of the input) of each field's first line.
        var fieldOffsets: [Int] = []
        /// The first problem found, if any.
        var problem: SIPError?

        var headers: SIPHeaders { SIPHeaders(fields: fields) }

        mutating func record(_ error: SIPError) {
            if problem == nil { problem = error }
        }
    }

    let limits: SIPLimits

    /// Reads `bytes[range]`, which holds the lines without the empty line that ends the
    /// head (so it ends with the last line's text, not a CRLF).
    func read(_ bytes: ArraySlice<UInt8>, range: Range<Int>, startLine: Bool) -> Head {
        var head = Head()
        var pieces: [ArraySlice<UInt8>] = []
        var pieceBytes = 0
        var name = ""
        var fieldStart = 0
        var first = startLine
        var lineStart = range.lowerBound

        func finishField(_ head: inout Head) {
            guard !pieces.isEmpty else { return }
            var value: [UInt8] = []
            for piece in pieces {
                let trimmed = SIPHeadReader.trimmed(piece)
                guard !trimmed.isEmpty else { continue }
                if !value.isEmpty { value.append(SIPGrammar.space) }
                value += trimmed
            }
            head.fields.append(SIPHeaders.Field(name: name, value: String(decoding: value, as: UTF8.self)))
            head.fieldOffsets.append(fieldStart)
            pieces = []
            pieceBytes = 0
        }

        while lineStart <= range.upperBound {
            let lineEnd = Self.nextCRLF(bytes, from: lineStart, before: range.upperBound) ?? range.upperBound
            let line = bytes[lineStart..<lineEnd]
            let offset = lineStart - bytes.startIndex
            defer { lineStart = lineEnd + 2 }
            if line.count > limits.maxLineBytes {
                head.record(SIPError(.limitExceeded, offset: offset, "a line of \(line.count) bytes is longer than the limit of \(limits.maxLineBytes)"))
                return head
            }
            if let bad = line.firstIndex(where: { $0 == SIPGrammar.cr || $0 == SIPGrammar.lf }) {
                head.record(SIPError(.invalidText, offset: bad - bytes.startIndex, "a CR or LF outside a line break"))
                continue
            }
            guard Self.isUTF8(line) else {
                head.record(SIPError(.invalidText, offset: offset, "a line that is not UTF-8"))
                continue
            }
            if first {
                first = false
                head.startLine = line
                head.isResponse = line.count >= 4 && SIPGrammar.equalsIgnoringCase(String(decoding: line.prefix(4), as: UTF8.self), "SIP/")
                continue
            }
            if let lead = line.first, SIPGrammar.isWhitespace(lead) {
                guard !pieces.isEmpty else {
                    head.record(SIPError(.malformedHeaderLine, offset: offset, "a continuation line before the first header"))
                    continue
                }
                pieceBytes += line.count
                guard pieceBytes <= limits.maxHeaderValueBytes else {
                    head.record(SIPError(.limitExceeded, offset: offset, "a header value longer than the limit of \(limits.maxHeaderValueBytes) bytes"))
                    return head
                }
                pieces.append(line)
                continue
            }
            finishField(&head)
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                head.record(SIPError(.malformedHeaderLine, offset: offset, "header line without a colon: \(SIPGrammar.quote(line))"))
                continue
            }
            var nameEnd = colon
            while nameEnd > line.startIndex, SIPGrammar.isWhitespace(bytes[nameEnd - 1]) { nameEnd -= 1 }
            let nameBytes = line[..<nameEnd]
            guard SIPGrammar.isToken(nameBytes) else {
                head.record(SIPError(.malformedHeaderLine, offset: offset, "header name \(SIPGrammar.quote(nameBytes)) is not a token"))
                continue
            }
            guard head.fields.count < limits.maxHeaderFields else {
                head.record(SIPError(.limitExceeded, offset: offset, "more than \(limits.maxHeaderFields) header fields"))
                return head
            }
            name = String(decoding: nameBytes, as: UTF8.self)
            fieldStart = offset
            pieces = [line[(colon + 1)...]]
            pieceBytes = line.count - (colon + 1 - line.startIndex)
        }
        finishField(&head)
        return head
    }

    /// Index of the next CRLF at or after `start` and before `end`, or nil.
    static func nextCRLF(_ bytes: ArraySlice<UInt8>, from start: Int, before end: Int) -> Int? {
        var index = start
        while index + 1 < end {
            if bytes[index] == SIPGrammar.cr, bytes[index + 1] == SIPGrammar.lf { return index }
            index += 1
        }
        return nil
    }

    /// Index of the first CRLF CRLF at or after `start` and before `limit`, or nil.
    static func endOfHead(_ bytes: ArraySlice<UInt8>, from start: Int, limit: Int) -> Int? {
        var index = max(start, bytes.startIndex)
        let last = min(limit, bytes.endIndex) - 4
        while index <= last {
            if bytes[index + 3] == SIPGrammar.lf, bytes[index + 2] == SIPGrammar.cr,
               bytes[index + 1] == SIPGrammar.lf, bytes[index] == SIPGrammar.cr {
                return index
            }
            index += 1
        }
        return nil
    }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, SIPGrammar.isWhitespace(first) { slice = slice.dropFirst() }
        while let last = slice.last, SIPGrammar.isWhitespace(last) { slice = slice.dropLast() }
        return slice
    }

    private static func isUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || UTF8Validator.isValid(bytes)
    }
}
