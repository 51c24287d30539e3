/// Why a call ended: the `reason` of DiCE, with Sinch's spelling.
public enum DisconnectReason: String, Sendable, Hashable, CaseIterable {
    /// No reason applies.
    case notApplicable = "N/A"
    /// The callee did not answer in time, or the call reached its `maxDuration`.
    case timeout = "TIMEOUT"
    /// The caller hung up.
    case callerHangup = "CALLERHANGUP"
    /// The callee hung up.
    case calleeHangup = "CALLEEHANGUP"
    /// The call was refused by configuration (a number not allowed, a limit reached).
    case blocked = "BLOCKED"
    /// A REST `PATCH` with `hangup` ended the call.
    case managerHangup = "MANAGERHANGUP"
    /// The account had no credit (kept for Sinch backends; Parley does not charge).
    case noCreditPartner = "NOCREDITPARTNER"
    /// Anything else went wrong.
    case generalError = "GENERALERROR"
    /// The caller hung up before the callee answered.
    case cancel = "CANCEL"
    /// The user called does not exist.
    case userNotFound = "USERNOTFOUND"
    /// The backend's callback failed: no answer in time, an HTTP error, or a body that is
    /// not JSON.
    case callbackError = "CALLBACKERROR"
    /// The backend answered JSON that is not valid SVAML, or an action that does not
    /// apply.
    case invalidSVAMLAction = "INVALIDSVAMLACTION"
}
