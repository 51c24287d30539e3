public import ParleyWireCore

/// The Incoming Call Event (ICE): a call arrived and the backend answers with SVAML
/// saying where it goes.
public struct IncomingCallEvent: Sendable, Hashable {
    public var header: CallbackHeader
    /// What the call costs to its original destination (`userRate`); Parley sends none.
    public var userRate: Money?
    /// The caller's number or id (`cli`), a number in E.164.
    public var cli: String?
    /// Who was called (`to`).
    public var to: Destination?
    /// The network of the callee (`domain`).
    public var domain: CallDomain?
    /// The network the call came from (`originationType`).
    public var originationType: CallDomain?
    /// The number originally dialled before a diversion (`rdnis`).
    public var rdnis: String?
    /// The calling app's call headers, or a SIP call's custom headers (`callHeaders`).
    public var callHeaders: [CallHeader]
    /// The calling app user's id (`user`), for calls an app placed.
    public var user: String?

    public init(header: CallbackHeader, userRate: Money? = nil, cli: String? = nil, to: Destination? = nil,
                domain: CallDomain? = nil, originationType: CallDomain? = nil, rdnis: String? = nil,
                callHeaders: [CallHeader] = [], user: String? = nil) {
        self.header = header
        self.userRate = userRate
        self.cli = cli
        self.to = to
        self.domain = domain
        self.originationType = originationType
        self.rdnis = rdnis
        self.callHeaders = callHeaders
        self.user = user
    }

    /// The JSON object, its members always in the same order.
    public var json: JSONObject {
        var object = header.start(event: CallbackEvent.Name.ice.rawValue)
        if let userRate { object.append("userRate", userRate.json) }
        object.append("cli", ifPresent: cli.map(CallbackEvent.sentNumber))
        if let to { object.append("to", to.json) }
        object.append("domain", ifPresent: domain?.rawValue)
        object.append("applicationKey", ifPresent: header.applicationKey)
        object.append("originationType", ifPresent: originationType?.rawValue)
        object.append("rdnis", ifPresent: rdnis.map(CallbackEvent.sentNumber))
        if !callHeaders.isEmpty { object.append("callHeaders", CallHeader.json(callHeaders)) }
        object.append("user", ifPresent: user)
        return object
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> IncomingCallEvent {
        IncomingCallEvent(
            header: try CallbackHeader.read(reader),
            userRate: try reader.optionalObject("userRate").map { reader throws(VoiceAPIError) in try Money.read(reader) },
            cli: try reader.optionalString("cli", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            to: try reader.optionalObject("to").map { reader throws(VoiceAPIError) in try Destination.read(reader) },
            domain: try reader.optionalEnumeration("domain", as: CallDomain.self),
            originationType: try reader.optionalEnumeration("originationType", as: CallDomain.self),
            rdnis: try reader.optionalString("rdnis", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            callHeaders: try CallHeader.list("callHeaders", of: reader),
            user: try reader.optionalString("user", maxBytes: VoiceAPILimits.maxIdentifierBytes))
    }
}
