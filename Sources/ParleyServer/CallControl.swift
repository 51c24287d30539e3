public import ParleyCallModel

/// What the REST API asks of the live call engine. The REST handlers read call records
/// from the store; only hanging up needs the engine, and only it knows live states.
public protocol CallControl: Sendable {
    /// Hangs up a call of `applicationKey` as `DELETE /v1/calls/{id}` does: `canceled`
    /// before the answer, `hungUp` after it.
    func hangUp(callID: String, applicationKey: String) async -> HangUpOutcome
    /// Calls in the engine now, by state (for `/metrics`).
    func liveCallCounts() async -> [CallState: Int]
}

/// The result of a REST hang-up.
public enum HangUpOutcome: Sendable, Hashable {
    /// The call was live and is now ending; every device gets `call.ended`.
    case hungUp
    /// No call with that id belongs to the application (live or stored).
    case notFound
    /// The call exists but already ended.
    case alreadyEnded
}
