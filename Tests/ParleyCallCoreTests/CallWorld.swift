import ParleyWireCore
import ParleyCallModel
import ParleyCallCore
import ParleySignaling

/// A simulated parleyd around a `CallRegistry`: performs its actions in order, delivers
/// messages into per-device inboxes, answers media instructions like a media anchor
/// (unless `autoMedia` is off), and keeps a clock tests advance by hand.
struct CallWorld {
    static let app = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    static let callerOffer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=setup:actpass\r\n"
    static let deviceAnswer = "v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=setup:active\r\n"
    static let anchorAnswer = "v=0\r\no=parley 1 1 IN IP4 192.0.2.10\r\ns=parley\r\nt=0 0\r\na=ice-lite\r\nm=audio 40002 UDP/TLS/RTP/SAVPF 111\r\na=setup:passive\r\n"
    static func anchorOffer(_ device: Device) -> String {
        "v=0\r\no=parley 1 1 IN IP4 192.0.2.10\r\ns=parley-\(device.deviceID)\r\nt=0 0\r\na=ice-lite\r\nm=audio 40000 UDP/TLS/RTP/SAVPF 111\r\na=setup:actpass\r\n"
    }
    /// The anchor's offer for a SIP party's plain RTP leg.
    static let anchorRTPOffer = "v=0\r\no=parley 1 1 IN IP4 192.0.2.10\r\ns=parley\r\nt=0 0\r\nm=audio 40010 RTP/AVP 0 8 101\r\nc=IN IP4 192.0.2.10\r\na=rtpmap:101 telephone-event/8000\r\n"

    var registry: CallRegistry
    var now: ClockReading
    var inbox: [Device: [SignalingMessage]] = [:]
    var mediaLog: [MediaInstruction] = []
    var records: [CallRecord] = []
    var pushes: [PushInstruction] = []
    var playouts: [(callID: String, role: CallLegRole, playout: CallLegPlayout)] = []
    /// What SIP parties were told, in order (the SIP user agent's side).
    var sipLog: [(party: SIPParty, notification: CallNotification)] = []
    /// What room parties were told (parleyd drops these: a room has no adapter).
    var roomLog: [(party: RoomParty, notification: CallNotification)] = []
    var autoMedia = true
    private var requestCounter = 0

    init(configuration: CallConfiguration = CallConfiguration(), router: any CallRouter = PresenceRouter()) {
        registry = CallRegistry(configuration: configuration, router: router)
        now = ClockReading(instant: ContinuousClock.now, unixMilliseconds: 1_764_421_200_000)
    }

    static func device(_ user: String, _ id: String) -> Device {
        Device(user: AppUser(applicationKey: app, userID: user), deviceID: id)
    }

    mutating func perform(_ actions: [CallAction]) {
        var queue = actions
        var index = 0
        while index < queue.count {
            let action = queue[index]
            index += 1
            switch action {
            case .send(let device, let message):
                inbox[device, default: []].append(message)
            case .notify(.device(let device), let notification):
                if let frame = DeviceAdapter.frame(for: notification) { inbox[device, default: []].append(frame) }
            case .notify(.sip(let party), let notification):
                sipLog.append((party, notification))
            case .notify(.room(let party), let notification):
                roomLog.append((party, notification))
            case .record(let record):
                records.append(record)
            case .push(let instruction):
                pushes.append(instruction)
            case .recordPlayout(let callID, let role, let playout):
                playouts.append((callID, role, playout))
            case .media(let instruction):
                mediaLog.append(instruction)
                guard autoMedia else { continue }
                switch instruction {
                case .answerCaller(let callID, _, _), .joinRoom(let callID, _, _), .answerSIPCaller(let callID, _, _):
                    queue += registry.handleMedia(.callerLegReady(sdp: Self.anchorAnswer), callID: callID, now: now)
                case .offerCallee(let callID, .device(let device)):
                    queue += registry.handleMedia(.calleeLegReady(.device(device), sdp: Self.anchorOffer(device)), callID: callID, now: now)
                case .offerCallee(let callID, .sip(let party)):
                    queue += registry.handleMedia(.calleeLegReady(.sip(party), sdp: Self.anchorRTPOffer), callID: callID, now: now)
                default:
                    break
                }
            }
        }
    }

    mutating func connect(_ device: Device, resumed: Bool = false) {
        perform(registry.deviceConnected(device, resumed: resumed, now: now))
    }

    mutating func disconnect(_ device: Device) {
        perform(registry.deviceDisconnected(device, now: now))
    }

    mutating func nextRequestID() -> String {
        requestCounter += 1
        return "r\(requestCounter)"
    }

    @discardableResult
    mutating func call(from caller: Device, to callee: String, callID: String, headers: [String: String] = [:]) -> String {
        let start = SignalingMessage.CallStart(requestID: nextRequestID(), callID: callID, to: .user(callee), headers: headers, sdp: Self.callerOffer)
        perform(registry.handleRequest(.callStart(start), from: caller, now: now))
        return callID
    }

    mutating func ack(_ device: Device, _ callID: String) {
        perform(registry.handleRequest(.callAck(.init(requestID: nextRequestID(), callID: callID)), from: device, now: now))
    }

    mutating func answer(_ device: Device, _ callID: String) {
        perform(registry.handleRequest(.callAnswer(.init(requestID: nextRequestID(), callID: callID, sdp: Self.deviceAnswer)), from: device, now: now))
    }

    mutating func decline(_ device: Device, _ callID: String) {
        perform(registry.handleRequest(.callDecline(.init(requestID: nextRequestID(), callID: callID)), from: device, now: now))
    }

    mutating func hangup(_ device: Device, _ callID: String) {
        perform(registry.handleRequest(.callHangup(.init(requestID: nextRequestID(), callID: callID)), from: device, now: now))
    }

    mutating func relay(_ device: Device, _ callID: String) {
        perform(registry.relayPush(callID: callID, requestID: nextRequestID(), from: device, now: now))
    }

    /// A router's late decision arrives for `callID`.
    mutating func route(_ callID: String, _ decision: RoutingDecision) {
        perform(registry.handleRouting(decision, callID: callID, now: now))
    }

    /// The decision the local router would give now for a call from `caller` to user `callee`.
    func presenceDecision(from caller: Device, to callee: String) -> RoutingDecision? {
        let request = RouteRequest(callID: "", caller: caller, destination: .user(callee), headers: [:], video: false)
        return PresenceRouter().route(request, presence: registry.presence)
    }

    mutating func media(_ event: MediaEvent, _ callID: String) {
        perform(registry.handleMedia(event, callID: callID, now: now))
    }

    /// Moves the clock, firing due timers on the way like parleyd's event loop would.
    mutating func advance(by duration: Duration) {
        let target = now.instant.advanced(by: duration)
        while let deadline = registry.nextDeadline, deadline <= target {
            now = now.advanced(by: now.instant.duration(to: max(deadline, now.instant)))
            perform(registry.handleTimeout(now: now))
        }
        now = now.advanced(by: now.instant.duration(to: target))
    }

    /// Message types a device received, e.g. `["result", "call.media", ...]`, with the
    /// end cause appended to `call.ended` (`call.ended:hungUp`).
    func log(_ device: Device) -> [String] {
        (inbox[device] ?? []).map { message in
            switch message {
            case .callEnded(let ended): "call.ended:\(ended.cause.rawValue)"
            case .error(let error): "error:\(error.code.rawValue)"
            default: message.type.rawValue
            }
        }
    }

    func ended(_ device: Device) -> SignalingMessage.CallEnded? {
        for case .callEnded(let ended) in inbox[device] ?? [] { return ended }
        return nil
    }

    mutating func clearInboxes() {
        inbox = [:]
    }
}
