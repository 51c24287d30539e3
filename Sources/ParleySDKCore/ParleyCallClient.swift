import ParleySignaling

/// Places calls and hears of incoming ones; `ParleyClient.callClient`.
public final class ParleyCallClient: @unchecked Sendable {
    // @unchecked: the delegate slot is `Locked`; `client` is only a weak link back.
    private let delegateSlot = Locked(WeakReference())
    /// The built-in integration's mediator, told of incoming calls before `delegate`.
    private let integrationSlot = Locked(WeakReference())
    weak var client: ParleyClient?

    init() {}

    /// Hears of incoming calls.
    public weak var delegate: (any ParleyCallClientDelegate)? {
        get { delegateSlot.current.object as? any ParleyCallClientDelegate }
        set { delegateSlot.withLock { $0.object = newValue } }
    }

    /// The integration's delegate (`ParleyCallMediator`), which an app's `delegate` does not displace.
    var integrationDelegate: (any ParleyCallClientDelegate)? {
        get { integrationSlot.current.object as? any ParleyCallClientDelegate }
        set { integrationSlot.withLock { $0.object = newValue } }
    }

    /// Everyone told of incoming calls, in order: the integration, then `delegate` (each once).
    var allDelegates: [any ParleyCallClientDelegate] {
        let integration = integrationDelegate
        guard let own = delegate else { return integration.map { [$0] } ?? [] }
        guard let integration, integration !== own else { return [own] }
        return [integration, own]
    }

    /// The system activated (true) or deactivated (false) the app's audio session for a
    /// call: call audio runs only in between when the system manages it. For an app that
    /// runs its own CallKit provider and calls this from `provider(_:didActivate:)` and
    /// `provider(_:didDeactivate:)` (on Apple platforms `didActivate(audioSession:)` and
    /// `didDeactivate(audioSession:)` say it); the SDK's own CallKit integration does it
    /// itself. Without the client (gone) it does nothing.
    public func setSystemAudioSessionActive(_ active: Bool) {
        client?.audioController.setSystemAudioSessionActive(active)
    }

    /// Calls an app user. See `callUser(withId:headers:)`.
    public func callUser(withId userId: String) -> Result<ParleyCall, any Error> {
        callUser(withId: userId, headers: [:])
    }

    /// Calls an app user, with custom headers the callee receives (at most 64, 1024 bytes
    /// of names and values). Returns the call at once, state `.initiating`; set its
    /// delegate to follow it. Fails with `ParleyClientError` when the client has not
    /// started (`not_started`) or the user id or headers break the protocol's rules
    /// (`invalid_argument`).
    public func callUser(withId userId: String, headers: [String: String]) -> Result<ParleyCall, any Error> {
        guard let client else { return .failure(ParleyClientError(code: "not_started", message: "the client is gone")) }
        return client.placeCall(to: .user(userId), headers: headers)
    }

    /// Calls a phone number. See `callPhoneNumber(_:headers:)`.
    public func callPhoneNumber(_ phoneNumber: String) -> Result<ParleyCall, any Error> {
        callPhoneNumber(phoneNumber, headers: [:])
    }

    /// Calls a phone number through the server's SIP trunk (app to PSTN), presenting the
    /// client's `cli` as the caller id (or, without one, the application's default).
    ///
    /// - Parameters:
    ///   - phoneNumber: E.164 with the leading `+`, e.g. `+14155550101` (`+`, the country
    ///     code, then the subscriber number: 2-15 digits in all, no spaces).
    ///   - headers: custom headers sent as SIP headers on the INVITE: each name must
    ///     start with `x-` (any case), under `callUser(withId:headers:)`'s limits.
    /// - Returns: the call at once, state `.initiating`, `remoteKind` `.phone` and
    ///   `remoteUserId` the number; or `ParleyClientError` `invalid_argument` (a number
    ///   that is not E.164, a header not named `x-...`, headers over the limits) or
    ///   `not_started`, with nothing placed.
    public func callPhoneNumber(_ phoneNumber: String, headers: [String: String]) -> Result<ParleyCall, any Error> {
        guard let client else { return .failure(ParleyClientError(code: "not_started", message: "the client is gone")) }
        do throws(ParleyClientError) {
            let destination = try CallDestination.phoneNumber(phoneNumber)
            try CallDestination.checkSIPHeaders(headers)
            return client.placeCall(to: destination, headers: headers)
        } catch {
            return .failure(error)
        }
    }

    /// Joins a conference room. See `callConference(withId:headers:)`.
    public func callConference(withId conferenceId: String) -> Result<ParleyCall, any Error> {
        callConference(withId: conferenceId, headers: [:])
    }

    /// Joins a conference room of the application (app to conference): everyone in the
    /// room hears everyone else. The room is created by its first participant and closed
    /// after its last leaves; rooms of other applications are never reached.
    ///
    /// The call's events are those of any call: `callDidProgress`, then (no ringing) the
    /// answer at once, `callDidEstablish` when this device's audio flows into the room,
    /// and `callDidEnd` when it leaves (`hangup()`) or is removed (`endCause` `.hungUp`).
    ///
    /// - Parameters:
    ///   - conferenceId: 1-64 characters of `A-Z a-z 0-9 - _ =`.
    ///   - headers: custom headers for the call's record, under `callUser(withId:headers:)`'s limits.
    /// - Returns: the call at once, state `.initiating`, `remoteKind` `.conference` and
    ///   `remoteUserId` the conference id; or `ParleyClientError` `invalid_argument` (an
    ///   empty id, one over 64 characters or with other characters, headers over the
    ///   limits) or `not_started`, with nothing placed.
    public func callConference(withId conferenceId: String, headers: [String: String]) -> Result<ParleyCall, any Error> {
        guard let client else { return .failure(ParleyClientError(code: "not_started", message: "the client is gone")) }
        do throws(ParleyClientError) {
            return client.placeCall(to: try CallDestination.conference(conferenceId), headers: headers)
        } catch {
            return .failure(error)
        }
    }

    /// Calls a SIP endpoint. See `callSIP(_:headers:)`.
    public func callSIP(_ sipIdentity: String) -> Result<ParleyCall, any Error> {
        callSIP(sipIdentity, headers: [:])
    }

    /// Calls a SIP endpoint through the server's SIP gateway (app to SIP); where the
    /// domain is reached is the server's configuration.
    ///
    /// - Parameters:
    ///   - sipIdentity: `user@domain`, with an optional `:port` and `;transport=udp` or
    ///     `;transport=tcp`, and optionally written as a `sip:` URI
    ///     (`sip:alice@pbx.example.com:5070;transport=tcp`). The domain is a host name or
    ///     an IP address (IPv6 in brackets).
    ///   - headers: custom headers sent as SIP headers on the INVITE: each name must
    ///     start with `x-` (any case), under `callUser(withId:headers:)`'s limits.
    /// - Returns: the call at once, state `.initiating`, `remoteKind` `.sip` and
    ///   `remoteUserId` the address without `sip:`; or `ParleyClientError`
    ///   `invalid_argument` (an address of another form, `sips:`, a header not named
    ///   `x-...`, headers over the limits) or `not_started`, with nothing placed.
    public func callSIP(_ sipIdentity: String, headers: [String: String]) -> Result<ParleyCall, any Error> {
        guard let client else { return .failure(ParleyClientError(code: "not_started", message: "the client is gone")) }
        do throws(ParleyClientError) {
            let destination = try CallDestination.sipAddress(sipIdentity)
            try CallDestination.checkSIPHeaders(headers)
            return client.placeCall(to: destination, headers: headers)
        } catch {
            return .failure(error)
        }
    }
}
