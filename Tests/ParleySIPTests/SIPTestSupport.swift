import Testing
@testable import ParleySIP

/// Parses `bytes` as one UDP datagram and validates it, as a receiver would.
func receive(_ bytes: [UInt8], limits: SIPLimits = .default) throws(SIPError) -> SIPMessage {
    let message = try SIPMessage(datagram: bytes, limits: limits)
    try message.validate()
    return message
}

/// The error receiving `bytes` gives; an issue when it is accepted.
func rejection(_ bytes: [UInt8], limits: SIPLimits = .default, sourceLocation: SourceLocation = #_sourceLocation) -> SIPError? {
    do {
        let message = try receive(bytes, limits: limits)
        Issue.record("accepted: \(message.startLine)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Receiving `bytes` must give `kind` answered with `status` (and `reason` when given); the
/// suggested response must copy Via, From, Call-ID and CSeq, and parse back.
@discardableResult
func expectAnswer(_ bytes: [UInt8], _ kind: SIPError.Kind, status: Int, reason: String? = nil,
                  sourceLocation: SourceLocation = #_sourceLocation) -> SIPError? {
    guard let error = rejection(bytes, sourceLocation: sourceLocation) else { return nil }
    #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
    guard case .respond(let statusCode, let reasonPhrase) = error.disposition else {
        Issue.record("expected \(status), got \(error)", sourceLocation: sourceLocation)
        return error
    }
    #expect(statusCode == status, "\(error)", sourceLocation: sourceLocation)
    if let reason { #expect(reasonPhrase == reason, sourceLocation: sourceLocation) }
    do {
        guard let response = try error.makeResponse(toTag: "t1") else {
            Issue.record("no response for \(error)", sourceLocation: sourceLocation)
            return error
        }
        #expect(response.statusCode == status, sourceLocation: sourceLocation)
        #expect(response.headers["via"] == error.requestHeaders["via"], sourceLocation: sourceLocation)
        #expect(!response.headers["via"].isEmpty, sourceLocation: sourceLocation)
        let again = try SIPMessage(datagram: response.serialized())
        #expect(again.statusCode == status, sourceLocation: sourceLocation)
        #expect(again.headers["call-id"] == error.requestHeaders["call-id"], sourceLocation: sourceLocation)
    } catch {
        Issue.record("the suggested response fails: \(error)", sourceLocation: sourceLocation)
    }
    return error
}

/// Receiving `bytes` must give `kind` and be dropped.
@discardableResult
func expectDrop(_ bytes: [UInt8], _ kind: SIPError.Kind, sourceLocation: SourceLocation = #_sourceLocation) -> SIPError? {
    guard let error = rejection(bytes, sourceLocation: sourceLocation) else { return nil }
    #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
    #expect(error.disposition == .drop, "\(error)", sourceLocation: sourceLocation)
    #expect((try? error.makeResponse()) == .some(nil), sourceLocation: sourceLocation)
    return error
}

/// Feeds `bytes` to a stream framer in pieces of `chunk` bytes and collects what it frames.
func frameStream(_ bytes: [UInt8], chunk: Int, limits: SIPLimits = .default) throws(SIPError) -> [SIPStreamFrame] {
    var framer = SIPStreamFramer(limits: limits)
    var buffer: [UInt8] = []
    var frames: [SIPStreamFrame] = []
    var offset = 0
    while true {
        let frame = try framer.next(in: buffer)
        switch frame {
        case .needMoreBytes:
            guard offset < bytes.count else { return frames }
            let end = min(bytes.count, offset + chunk)
            buffer += bytes[offset..<end]
            offset = end
        case .message(_, let consumed), .invalidMessage(_, let consumed), .ping(let consumed), .pong(let consumed):
            frames.append(frame)
            buffer.removeFirst(consumed)
        }
    }
}

/// The message `bytes` frames to over a stream, fed whole and byte by byte (which must
/// agree).
func streamMessage(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> SIPMessage? {
    let whole = try frameStream(bytes, chunk: bytes.count)
    let split = try frameStream(bytes, chunk: 1)
    #expect(whole == split, sourceLocation: sourceLocation)
    for frame in whole {
        if case .message(let message, _) = frame { return message }
    }
    return nil
}

/// Every prefix of `bytes` parses or throws, as a datagram and on a stream; never traps.
func expectNoTrapOnPrefixes(_ bytes: [UInt8]) {
    for end in stride(from: 0, through: bytes.count, by: max(1, bytes.count / 97)) {
        let prefix = Array(bytes[..<end])
        if let message = try? SIPMessage(datagram: prefix) {
            _ = try? message.validate()
            _ = try? message.vias()
            _ = try? message.contacts()
        }
        _ = try? frameStream(prefix, chunk: 7)
    }
}
