import ParleySIP

/// The `Output` of a call leg as `SIPDialogLeg` writes it; the legs' enum cases are the
/// witnesses.
protocol SIPDialogLegOutput {
    associatedtype Event: SIPDialogLegEvent
    static func send(_ message: SIPMessage, to hop: SIPHop) -> Self
    static func event(_ event: Event) -> Self
}

/// The events `SIPDialogLeg` reports for both legs.
protocol SIPDialogLegEvent {
    static func sessionRefreshed(interval: UInt32) -> Self
    static func localOfferAnswered(sdp: [UInt8]?) -> Self
    static func localOfferRefused(statusCode: Int) -> Self
}

/// The ends `SIPDialogLeg` can give a call.
protocol SIPDialogLegEnd {
    static func dialogFailed(statusCode: Int) -> Self
    static var transportError: Self { get }
}
