import ParleyWireCore

/// `connectSip`: connects the call to a SIP address.
public struct ConnectSipAction: Sendable, Hashable {
    /// The transports a SIP destination may name.
    public enum Transport: String, Sendable, Hashable, CaseIterable {
        case udp = "UDP"
        case tcp = "TCP"
        case tls = "TLS"
    }

    /// Where to call (`{type: "sip", endpoint}`), the endpoint a SIP address with or
    /// without `sip:`.
    public var destination: Destination
    /// The longest the connected call lasts, in seconds.
    public var maxDurationSeconds: Int64?
    /// The caller id shown to the callee.
    public var cli: String?
    /// The transport to reach the destination with.
    public var transport: Transport?
    /// Private SIP headers sent with the INVITE.
    public var callHeaders: [CallHeader]
    /// Music on hold played when the SIP side holds the call.
    public var moh: String?
    /// Whether ACE and DiCE are not sent for this leg.
    public var suppressCallbacks: Bool?

    public init(destination: Destination, maxDurationSeconds: Int64? = nil, cli: String? = nil, transport: Transport? = nil,
                callHeaders: [CallHeader] = [], moh: String? = nil, suppressCallbacks: Bool? = nil) {
        self.destination = destination
        self.maxDurationSeconds = maxDurationSeconds
        self.cli = cli
        self.transport = transport
        self.callHeaders = callHeaders
        self.moh = moh
        self.suppressCallbacks = suppressCallbacks
    }

    func write(into object: inout JSONObject) {
        object.append("destination", destination.json)
        object.append("maxDuration", ifPresent: maxDurationSeconds)
        object.append("cli", ifPresent: cli)
        object.append("transport", ifPresent: transport?.rawValue)
        if !callHeaders.isEmpty { object.append("callHeaders", CallHeader.json(callHeaders)) }
        object.append("moh", ifPresent: moh)
        if let suppressCallbacks { object.append("suppressCallbacks", suppressCallbacks) }
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> ConnectSipAction {
        let child = try reader.object("destination")
        let destination = try Destination.read(child)
        guard destination.kind == .sip else {
            throw child.failure("type", "connectSip connects to a SIP address: the type must be sip")
        }
        guard destination.endpoint.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw child.failure("endpoint", "a SIP address holds only visible ASCII")
        }
        return ConnectSipAction(
            destination: destination,
            maxDurationSeconds: try reader.optionalInteger("maxDuration", in: 0...VoiceAPILimits.maxDurationSeconds),
            cli: try reader.optionalString("cli", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            transport: try reader.optionalEnumeration("transport", as: Transport.self),
            callHeaders: try CallHeader.list("callHeaders", of: reader),
            moh: try reader.optionalString("moh", maxBytes: VoiceAPILimits.maxIdentifierBytes),
            suppressCallbacks: try reader.optionalBool("suppressCallbacks"))
    }
}
