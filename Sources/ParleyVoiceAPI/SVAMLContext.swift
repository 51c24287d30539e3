/// What an SVAML document answers, which decides the actions and instructions it may hold
/// (the sets Sinch documents for each callback; a call update is a REST `PATCH`).
public enum SVAMLContext: String, Sendable, Hashable, CaseIterable {
    /// The answer to an Incoming Call Event.
    case ice
    /// The answer to an Answered Call Event.
    case ace
    /// The answer to a Prompt Input Event.
    case pie
    /// A REST `PATCH` of a live call (`/calling/v1/calls/id/{callId}`). Beside Sinch's
    /// `hangup`, `continue` and `park`, Parley takes `connectPstn` and `connectSip` here,
    /// which move a call the server answered (a parked call) on to a call out.
    case callUpdate

    /// The actions allowed.
    public var actions: Set<SVAMLAction.Name> {
        switch self {
        case .ice: [.connectMxp, .connectPstn, .connectSip, .connectConf, .hangup, .park, .runMenu]
        case .ace: [.connectConf, .continue, .hangup, .runMenu]
        case .pie: [.connectPstn, .connectSip, .connectConf, .continue, .hangup, .runMenu]
        case .callUpdate: [.hangup, .continue, .park, .connectPstn, .connectSip]
        }
    }

    /// The instructions allowed.
    public var instructions: Set<SVAMLInstruction.Name> {
        switch self {
        case .ice: [.playFiles, .say, .sendDtmf, .setCookie, .answer, .startRecording]
        case .ace: [.playFiles, .say, .setCookie, .startRecording]
        case .pie: [.playFiles, .say, .sendDtmf, .setCookie, .startRecording, .stopRecording]
        case .callUpdate: [.playFiles, .say]
        }
    }
}
