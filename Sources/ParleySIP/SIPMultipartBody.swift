/// A multipart body (RFC 2046 §5.1: `multipart/mixed`, `/alternative`, `/related`...) cut
/// into its parts, each with its own header fields, enough to find the `application/sdp`
/// part among others (RFC 4475 §3.1.1.11 has SDP-less text beside binary with NUL bytes).
///
/// The preamble before the first boundary and the epilogue after the closing one are
/// ignored; whitespace after a boundary is allowed (transport padding); a body without
/// its closing boundary is refused.
public struct SIPMultipartBody: Sendable, Hashable {
    /// One part.
    public struct Part: Sendable, Hashable {
        /// The part's header fields (Content-Type, Content-Transfer-Encoding...).
        public let headers: SIPHeaders
        /// The part's content.
        public let body: [UInt8]

        /// The part's Content-Type; RFC 2046 §5.1 defaults it to `text/plain`, which this
        /// reports as nil.
        public func contentType() throws(SIPError) -> SIPContentType? {
            let values = headers["content-type"]
            guard let value = values.first else { return nil }
            guard values.count == 1 else { throw SIPError(.malformedBody, "a body part with two Content-Types") }
            do throws(SIPError) {
                return try SIPContentType(parsing: value)
            } catch {
                throw SIPError(.malformedBody, "a body part's Content-Type: \(error.detail)")
            }
        }
    }

    /// The parts in order.
    public let parts: [Part]

    /// Cuts `body` on `boundary` (1 to 70 characters, RFC 2046 §5.1.1).
    public init(parsing body: [UInt8], boundary: String, limits: SIPLimits = .default) throws(SIPError) {
        let boundaryBytes = Array(boundary.utf8)
        guard (1...70).contains(boundaryBytes.count), boundaryBytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
            throw SIPError(.malformedBody, "boundary \(SIPGrammar.quote(boundary)) is not 1-70 printable characters")
        }
        let delimiter = [SIPGrammar.cr, SIPGrammar.lf, UInt8(ascii: "-"), UInt8(ascii: "-")] + boundaryBytes
        // The first boundary may open the body, without the CRLF before it.
        var cursor: Int
        if body.starts(with: delimiter.dropFirst(2)) {
            cursor = delimiter.count - 2
        } else if let found = Self.find(delimiter, in: body, from: 0) {
            cursor = found + delimiter.count
        } else {
            throw SIPError(.malformedBody, "no boundary \(SIPGrammar.quote(boundary)) in the body")
        }
        var parts: [Part] = []
        while true {
            // After a boundary: "--" closes; else optional padding, then CRLF, then a part.
            if body[cursor...].starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) { break }
            while cursor < body.count, SIPGrammar.isWhitespace(body[cursor]) { cursor += 1 }
            guard body[cursor...].starts(with: [SIPGrammar.cr, SIPGrammar.lf]) else {
                throw SIPError(.malformedBody, "no line break after a boundary")
            }
            cursor += 2
            guard let next = Self.find(delimiter, in: body, from: cursor) else {
                throw SIPError(.malformedBody, "the body ends without its closing boundary")
            }
            guard parts.count < limits.maxBodyParts else {
                throw SIPError(.malformedBody, "more than \(limits.maxBodyParts) body parts")
            }
            parts.append(try Self.part(body[cursor..<next], limits: limits))
            cursor = next + delimiter.count
        }
        self.parts = parts
    }

    /// A part: header lines, an empty line, the content (or, with no headers, an empty
    /// line and the content).
    private static func part(_ bytes: ArraySlice<UInt8>, limits: SIPLimits) throws(SIPError) -> Part {
        if bytes.starts(with: [SIPGrammar.cr, SIPGrammar.lf]) {
            return Part(headers: SIPHeaders(), body: Array(bytes.dropFirst(2)))
        }
        guard let headEnd = SIPHeadReader.endOfHead(bytes, from: bytes.startIndex, limit: bytes.endIndex) else {
            throw SIPError(.malformedBody, "a body part without the empty line after its headers")
        }
        let head = SIPHeadReader(limits: limits).read(bytes, range: bytes.startIndex..<headEnd, startLine: false)
        if let problem = head.problem { throw SIPError(.malformedBody, "a body part's headers: \(problem.detail)") }
        return Part(headers: head.headers, body: Array(bytes[(headEnd + 4)...]))
    }

    /// The first index of `needle` in `haystack` at or after `start`.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= haystack.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

extension SIPMessage {
    /// The body cut into parts when the Content-Type is multipart with a boundary; nil for
    /// any other body.
    public func multipartBody(limits: SIPLimits = .default) throws(SIPError) -> SIPMultipartBody? {
        guard let type = try contentType(), type.isMultipart else { return nil }
        guard let boundary = type.boundary else {
            throw place(SIPError(.malformedBody, "a multipart Content-Type without a boundary"))
        }
        do throws(SIPError) {
            return try SIPMultipartBody(parsing: body, boundary: boundary, limits: limits)
        } catch {
            throw place(error)
        }
    }

    /// The session description the message carries: the body when it is
    /// `application/sdp`, else the first `application/sdp` part of a multipart body
    /// (searched into nested multiparts up to `limits.maxMultipartDepth`); nil when there
    /// is none.
    public func sessionDescription(limits: SIPLimits = .default) throws(SIPError) -> [UInt8]? {
        guard let type = try contentType() else { return nil }
        do throws(SIPError) {
            return try Self.sessionDescription(in: body, type: type, limits: limits, depth: 0)
        } catch {
            throw place(error)
        }
    }

    private static func sessionDescription(in body: [UInt8], type: SIPContentType, limits: SIPLimits, depth: Int) throws(SIPError) -> [UInt8]? {
        if type.isSDP { return body }
        guard type.isMultipart, depth < limits.maxMultipartDepth else { return nil }
        guard let boundary = type.boundary else { throw SIPError(.malformedBody, "a multipart Content-Type without a boundary") }
        for part in try SIPMultipartBody(parsing: body, boundary: boundary, limits: limits).parts {
            guard let partType = try part.contentType() else { continue }
            if let found = try sessionDescription(in: part.body, type: partType, limits: limits, depth: depth + 1) { return found }
        }
        return nil
    }
}
