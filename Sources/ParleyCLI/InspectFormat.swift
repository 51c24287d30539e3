/// The message formats `parley inspect` decodes.
enum InspectFormat: String, CaseIterable {
    case stun, rtp, rtcp, sdp, ws, signaling

    /// Decodes `input` and returns the JSON text to print, or throws a one-line failure.
    func inspect(_ input: [UInt8], options: InspectCommand.Options) throws(InspectCommand.Failure) -> String {
        guard !input.isEmpty else { throw InspectCommand.Failure(message: "invalid \(rawValue): empty input") }
        switch self {
        case .rtp: return try inspectRTP(input, telephoneEventPayloadType: options.telephoneEventPayloadType)
        case .rtcp: return try inspectRTCP(input)
        case .stun: return try inspectSTUN(input, password: options.password)
        case .signaling: return try inspectSignaling(input)
        case .ws: return try inspectWebSocket(input)
        case .sdp: return try inspectSDP(input)
        }
    }
}

extension InspectCommand.Failure {
    /// "invalid <format>: <parser's one-line description>".
    static func invalid(_ format: InspectFormat, _ error: some Error) -> Self {
        .init(message: "invalid \(format.rawValue): \(InspectCommand.oneLine(String(describing: error)))")
    }
}
