import ParleySignaling

/// Decodes the input as a signaling frame. Whatever decodes must survive a round trip:
/// re-encoding gives a frame that decodes to the same message, and encoding that again
/// gives the same bytes (encoding is deterministic). Whatever fails must yield an error
/// reply that is itself a valid frame, since the server sends it back as it is.
func fuzzSignaling(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let message: SignalingMessage
    do {
        message = try SignalingCodec.decode(bytes)
    } catch {
        do {
            try SignalingCodec.validate(SignalingCodec.errorReply(for: error))
        } catch let replyError {
            fatalError("error reply for \"\(error)\" is not a valid frame: \(replyError)")
        }
        return
    }
    let frame = SignalingCodec.encode(message)
    let again: SignalingMessage
    do {
        again = try SignalingCodec.decode(frame)
    } catch {
        fatalError("re-encoded \(message.type.rawValue) does not decode: \(error)")
    }
    guard again == message else {
        fatalError("round trip changed the \(message.type.rawValue) message")
    }
    guard SignalingCodec.encode(again) == frame else {
        fatalError("encoding of \(message.type.rawValue) is not deterministic")
    }
}
