public import ParleyWireCore

/// The Disconnected Call Event (DiCE): the call ended. Informational; the backend's
/// answer is not read.
public struct DisconnectedCallEvent: Sendable, Hashable {
    public var header: CallbackHeader
    /// How the call ended (`result`).
    public var result: DisconnectResult
    /// Why (`reason`).
    public var reason: DisconnectReason
    /// Seconds from answer to hang-up (`duration`), 0 for a call never answered.
    public var durationSeconds: Int64
    /// The caller (`from`): a number in E.164, a user id or a SIP address.
    public var from: String?
    /// The callee (`to`).
    public var to: Destination?
    /// What the call cost (`debit`); Parley sends none.
    public var debit: Money?
    /// The rate charged (`userRate`); Parley sends none.
    public var userRate: Money?
    /// The call's headers (`callHeaders`).
    public var callHeaders: [CallHeader]

    public init(header: CallbackHeader, result: DisconnectResult, reason: DisconnectReason, durationSeconds: Int64,
                from: String? = nil, to: Destination? = nil, debit: Money? = nil, userRate: Money? = nil,
                callHeaders: [CallHeader] = []) {
        self.header = header
        self.result = result
        self.reason = reason
        self.durationSeconds = durationSeconds
        self.from = from
        self.to = to
        self.debit = debit
        self.userRate = userRate
        self.callHeaders = callHeaders
    }

    /// The JSON object, its members always in the same order.
    public var json: JSONObject {
        var object = header.start(event: CallbackEvent.Name.dice.rawValue)
        object.append("reason", reason.rawValue)
        object.append("result", result.rawValue)
        if let debit { object.append("debit", debit.json) }
        if let userRate { object.append("userRate", userRate.json) }
        if let to { object.append("to", to.json) }
        object.append("applicationKey", ifPresent: header.applicationKey)
        object.append("duration", durationSeconds)
        object.append("from", ifPresent: from.map(CallbackEvent.sentNumber))
        if !callHeaders.isEmpty { object.append("callHeaders", CallHeader.json(callHeaders)) }
        return object
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> DisconnectedCallEvent {
        DisconnectedCallEvent(
            header: try CallbackHeader.read(reader),
            result: try reader.enumeration("result", as: DisconnectResult.self),
            reason: try reader.enumeration("reason", as: DisconnectReason.self),
            durationSeconds: try reader.optionalInteger("duration", in: 0...Int64(Int32.max)) ?? 0,
            from: try reader.optionalString("from", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            to: try reader.optionalObject("to").map { reader throws(VoiceAPIError) in try Destination.read(reader) },
            debit: try reader.optionalObject("debit").map { reader throws(VoiceAPIError) in try Money.read(reader) },
            userRate: try reader.optionalObject("userRate").map { reader throws(VoiceAPIError) in try Money.read(reader) },
            callHeaders: try CallHeader.list("callHeaders", of: reader))
    }
}
