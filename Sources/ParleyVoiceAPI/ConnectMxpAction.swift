import ParleyWireCore

/// `connectMxp`: connects the call to an app user, who rings on every device (and by push
/// when offline) through the normal call path.
public struct ConnectMxpAction: Sendable, Hashable {
    /// The user to ring (`{type: "username", endpoint}`); without it, the user the call
    /// was placed to.
    public var destination: Destination?
    /// Headers passed to the callee's app.
    public var callHeaders: [CallHeader]

    public init(destination: Destination? = nil, callHeaders: [CallHeader] = []) {
        self.destination = destination
        self.callHeaders = callHeaders
    }

    func write(into object: inout JSONObject) {
        if let destination { object.append("destination", destination.json) }
        if !callHeaders.isEmpty { object.append("callHeaders", CallHeader.json(callHeaders)) }
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> ConnectMxpAction {
        var destination: Destination?
        if let child = try reader.optionalObject("destination") {
            let read = try Destination.read(child)
            guard read.kind == .username else {
                throw child.failure("type", "connectMxp connects to an app user: the type must be username")
            }
            destination = read
        }
        return ConnectMxpAction(destination: destination, callHeaders: try CallHeader.list("callHeaders", of: reader))
    }
}
