import ParleySIP

/// Parses the input as one SIP datagram and as a stream fed whole and in uneven pieces
/// (the two framings must agree). Every message that parses is validated, read through
/// every typed accessor, written out and read back: the start line, headers and body must
/// survive (Content-Length aside, which writing sets), and writing again must give the
/// same bytes. Any error must be a `SIPError`; nothing may trap.
func fuzzSIP(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    if let message = try? SIPMessage(datagram: bytes, limits: fuzzLimits) {
        checkSIPRoundTrip(message)
    }
    let whole = frameSIPStream([bytes[...]])
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    var size = 1
    while start < bytes.count {
        let end = min(bytes.count, start + size)
        pieces.append(bytes[start..<end])
        start = end
        size = size % 11 + 1
    }
    let split = frameSIPStream(pieces)
    guard whole.messages == split.messages else { fatalError("SIP messages differ when the stream is split") }
    guard whole.failed == split.failed else { fatalError("SIP stream errors differ when the stream is split") }
    for message in whole.messages { checkSIPRoundTrip(message) }
}

private let fuzzLimits = SIPLimits(maxMessageBytes: 8192, maxHeaderFields: 64, maxLineBytes: 2048, maxHeaderValueBytes: 4096)

/// Writing adds ": " and a Content-Length line, so reading back allows for that.
private let roundTripLimits = SIPLimits(maxMessageBytes: 16384, maxHeaderFields: 65, maxLineBytes: 8192, maxHeaderValueBytes: 8192)

private func checkSIPRoundTrip(_ message: SIPMessage) {
    _ = try? message.validate()
    _ = try? message.vias()
    _ = try? message.from()
    _ = try? message.to()
    _ = try? message.callID()
    _ = try? message.cseq()
    _ = try? message.maxForwards()
    _ = try? message.contacts()
    _ = try? message.routes()
    _ = try? message.recordRoutes()
    _ = try? message.assertedIdentities()
    _ = try? message.contentType()
    _ = try? message.allow()
    _ = try? message.supported()
    _ = try? message.unsupportedRequirements(supported: ["timer"])
    _ = try? message.expires()
    _ = try? message.sessionExpires()
    _ = try? message.minSE()
    _ = try? message.sessionDescription()
    // Typed values that parse must read back from their written form.
    for address in (try? message.contacts())?.addresses ?? [] {
        _ = try? address.expires()
        _ = try? address.qValue()
        guard (try? SIPNameAddress(parsing: address.description)) == address else {
            fatalError("name-addr does not read back: \(address)")
        }
    }
    for via in (try? message.vias()) ?? [] {
        guard (try? SIPVia(parsing: via.description)) == via else { fatalError("Via does not read back: \(via)") }
    }
    if let uri = message.requestURI {
        guard let again = try? SIPURI(parsing: uri.description), again == uri else {
            fatalError("Request-URI does not read back: \(uri)")
        }
        _ = uri.isEquivalent(to: again)
    }
    if message.isRequest, let response = try? message.makeResponse(statusCode: 400, toTag: "fuzz") {
        guard (try? SIPMessage(datagram: response.serialized(), limits: roundTripLimits)) != nil else {
            fatalError("a response built from a parsed request does not parse")
        }
    }
    let written = message.serialized()
    guard let again = try? SIPMessage(datagram: written, limits: roundTripLimits) else {
        fatalError("written SIP message does not parse:\n\(String(decoding: written, as: UTF8.self))")
    }
    guard again.startLine == message.startLine, again.version == message.version, again.body == message.body,
          withoutLength(again.headers) == withoutLength(message.headers) else {
        fatalError("SIP round trip changed the message:\n\(String(decoding: written, as: UTF8.self))")
    }
    guard again.serialized() == written else { fatalError("SIP writing is not stable") }
}

private func withoutLength(_ headers: SIPHeaders) -> [SIPHeaders.Field] {
    headers.fields.filter { $0.canonicalName != "content-length" }
}

private func frameSIPStream(_ pieces: [ArraySlice<UInt8>]) -> (messages: [SIPMessage], failed: Bool) {
    var framer = SIPStreamFramer(limits: fuzzLimits)
    var buffer: [UInt8] = []
    var messages: [SIPMessage] = []
    var frames = 0
    for piece in pieces {
        buffer += piece
        while true {
            frames += 1
            if frames > 100_000 { fatalError("the SIP framer does not make progress") }
            let frame: SIPStreamFrame
            do {
                frame = try framer.next(in: buffer)
            } catch {
                return (messages, true)
            }
            switch frame {
            case .needMoreBytes:
                break
            case .message(let message, let consumed):
                messages.append(message)
                buffer.removeFirst(consumed)
                continue
            case .invalidMessage(_, let consumed), .ping(let consumed), .pong(let consumed):
                buffer.removeFirst(consumed)
                continue
            }
            break
        }
    }
    return (messages, false)
}
