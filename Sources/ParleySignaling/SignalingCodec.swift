import ParleyWireCore
/// Frames of the signaling protocol to `SignalingMessage` values and back.
///
/// Sans-I/O: bytes in, values out. The WebSocket layer hands in the payload of each text
/// frame; `decode` never traps, whatever the bytes (see `StrictJSONParser` for what it accepts).
public enum SignalingCodec {
    /// The protocol version this codec writes in `v`.
    public static let version = 1
    /// The protocol versions this codec reads.
    public static let supportedVersions = [1]
    /// The WebSocket subprotocol (`Sec-WebSocket-Protocol`) of this version.
    public static let subprotocol = "parley.v1"
    /// The HTTP path of the WebSocket endpoint.
    public static let path = "/v1/ws"

    /// Decodes one frame.
    ///
    /// Checks, in order: size against `maxFrameSize` (`too_large`); JSON syntax, UTF-8,
    /// duplicate keys and nesting (`malformed`); `v` (`bad_request` if missing or not an
    /// integer, `unsupported_version` if not 1); `type` (`unknown_type`, also for a type
    /// that `sender` may not send); then every field of that type (`bad_request`,
    /// `too_large`). Members this version does not define are ignored. `call.dtmf`, sent
    /// by both sides, is read as `sender` sends it; with no `sender`, a frame with an `id`
    /// is the device's request (`callDTMF`) and one without the server's event
    /// (`callDTMFReceived`).
    ///
    /// - Parameters:
    ///   - bytes: the text frame's payload.
    ///   - maxFrameSize: the largest frame accepted, in bytes.
    ///   - sender: who sent the frame, if the caller wants the direction enforced (a
    ///     server passes `.deviceToServer`); nil accepts both directions.
    public static func decode(
        _ bytes: [UInt8],
        maxFrameSize: Int = SignalingLimits.defaultMaxFrameSize,
        sender: SignalingMessageType.Direction? = nil
    ) throws(SignalingError) -> SignalingMessage {
        if bytes.count > maxFrameSize {
            throw SignalingError(code: .tooLarge, reason: "frame of \(bytes.count) bytes exceeds the limit of \(maxFrameSize) bytes")
        }
        let value: JSONValue
        do throws(StrictJSONParser.SyntaxError) {
            value = try StrictJSONParser.parse(bytes, maxDepth: SignalingLimits.maxDepth)
        } catch {
            throw SignalingError(code: .malformed, offset: error.offset, reason: error.reason)
        }
        return try message(from: value, sender: sender)
    }

    /// Decodes one frame given as text.
    public static func decode(
        _ text: String,
        maxFrameSize: Int = SignalingLimits.defaultMaxFrameSize,
        sender: SignalingMessageType.Direction? = nil
    ) throws(SignalingError) -> SignalingMessage {
        try decode(Array(text.utf8), maxFrameSize: maxFrameSize, sender: sender)
    }

    /// The frame for `message`: compact JSON, members in the documented order, optional
    /// members omitted when absent, header names sorted. Deterministic: equal messages
    /// give equal bytes.
    ///
    /// Values are written as they are; `validate(_:)` tells whether the receiver will accept them.
    public static func encode(_ message: SignalingMessage) -> [UInt8] {
        JSONWriter.serialize(message.json)
    }

    /// The frame for `message` as text.
    public static func encodeToString(_ message: SignalingMessage) -> String {
        String(decoding: encode(message), as: UTF8.self)
    }

    /// Throws the error the receiver would report for `message` (e.g. a user id with a
    /// space, headers over 1024 bytes), or returns if it is acceptable.
    public static func validate(_ message: SignalingMessage, maxFrameSize: Int = SignalingLimits.defaultMaxFrameSize) throws(SignalingError) {
        _ = try decode(encode(message), maxFrameSize: maxFrameSize)
    }

    /// The `error` frame a receiver sends back for a frame that failed to decode.
    public static func errorReply(for error: SignalingError) -> SignalingMessage {
        .error(SignalingMessage.ErrorReply(
            replyTo: error.requestID,
            code: error.code,
            message: error.description,
            field: error.field,
            supportedVersions: error.supportedVersions
        ))
    }

    // MARK: Envelope

    static func message(from value: JSONValue, sender: SignalingMessageType.Direction?) throws(SignalingError) -> SignalingMessage {
        guard case .object(let object) = value else {
            throw SignalingError(code: .malformed, reason: "frame is a JSON \(value.kindName), not an object")
        }
        // The id is read first so that even a frame failing below can be answered with `re`.
        var requestID: String? = nil
        if case .string(let id)? = object["id"], (try? TextRule.requestID.check(id)) != nil {
            requestID = id
        }
        let envelope = FieldReader(object: object, path: "", messageType: nil, requestID: requestID)

        let version = try envelope.integer("v", in: 0...Int64(Int32.max))
        guard supportedVersions.contains(Int(clamping: version)) else {
            let supported = supportedVersions.map(String.init).joined(separator: ", ")
            throw SignalingError(
                code: .unsupportedVersion, field: "v", requestID: requestID,
                reason: "version \(version) is not supported (supported: \(supported))",
                supportedVersions: supportedVersions
            )
        }

        let typeValue = try envelope.required("type")
        guard case .string(let typeName) = typeValue else {
            throw envelope.failure("type", "expected a string, found \(typeValue.kindName)")
        }
        guard let type = SignalingMessageType(rawValue: typeName) else {
            throw SignalingError(code: .unknownType, field: "type", requestID: requestID, reason: "unknown message type \(quoted(typeName))")
        }
        if let sender, !type.isSent(by: sender) {
            throw SignalingError(
                code: .unknownType, field: "type", requestID: requestID,
                reason: "message type \(type.rawValue) is only sent \(type.direction == .serverToDevice ? "by the server" : "by devices")"
            )
        }
        // `call.dtmf` is a device's request or the server's event. A reader that knows the
        // sender reads that side's form (so a device's frame without `id` is told `id` is
        // required); one that does not takes a frame with an `id` for the request.
        let form = sender ?? (type == .callDTMF && envelope.value("id") == nil ? .serverToDevice : type.direction)

        let reader = FieldReader(object: object, path: "", messageType: type, requestID: requestID)
        return try SignalingMessage(type: type, sender: form, reader: reader)
    }
}
