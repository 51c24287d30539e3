import ParleyWireCore
import ParleyCallModel
import ParleyCallCore
import ParleySignaling
import Testing

/// One `CallStateMachine` alone: from a state, one event, and the exact actions it
/// returns, in order (the record's new version last, when it changed).
@Suite("Call state machine: event and expected actions")
struct CallStateMachineTableTests {
    static let alice = CallWorld.device("alice", "a1")
    static let bob1 = CallWorld.device("bob", "b1")
    static let bob2 = CallWorld.device("bob", "b2")
    static let id = "7d3f9b20-6e1a-4c8d-b5f7-19a2c4e6d830"
    static let t = ClockReading(instant: ContinuousClock.now, unixMilliseconds: 50_000)

    /// Where a row starts from.
    enum Start {
        /// `call.start` accepted, no routing decision yet.
        case routing
        /// Routed to bob1 and bob2, caller's leg ready, both offered (`call.incoming` sent).
        case progressing
        /// As `progressing`, and bob1 acknowledged.
        case ringing
        /// As `ringing`, and bob1 answered.
        case answered
        /// As `answered`, and both legs connected.
        case established
        /// As `progressing`, bob1 acknowledged with an early media answer, and the
        /// caller's leg and bob1's connected while it rings.
        case earlyConnected

        var inputs: [CallInput] {
            let ready: [CallInput] = [
                .media(.callerLegReady(sdp: CallWorld.anchorAnswer)),
                .media(.calleeLegReady(.device(bob1), sdp: CallWorld.anchorOffer(bob1))),
                .media(.calleeLegReady(.device(bob2), sdp: CallWorld.anchorOffer(bob2))),
            ]
            switch self {
            case .routing: return []
            case .progressing: return [.routed(.ringDevices([bob1, bob2]))] + ready
            case .ringing: return Start.progressing.inputs + [.acknowledged(bob1)]
            case .answered: return Start.ringing.inputs + [.answered(bob1, sdp: CallWorld.deviceAnswer)]
            case .established: return Start.answered.inputs + [.media(.legConnected(.caller)), .media(.legConnected(.callee(.device(bob1))))]
            case .earlyConnected:
                return Start.progressing.inputs + [.acknowledged(bob1, earlyAnswer: CallWorld.deviceAnswer),
                                                   .media(.legConnected(.caller)), .media(.legConnected(.callee(.device(bob1))))]
            }
        }
    }

    static func machine(_ start: Start) throws -> CallStateMachine {
        let request = SignalingMessage.CallStart(requestID: "1", callID: id, to: .user("bob"), sdp: CallWorld.callerOffer)
        var (machine, _) = CallStateMachine.start(request, from: alice, to: bob1.user, decision: nil, now: t)
        for input in start.inputs { _ = try machine.handle(input, now: t) }
        return machine
    }

    static func callerDetails(_ record: CallRecord) -> SignalingMessage.CallDetails {
        .init(startedTime: record.times.startedTime, progressedTime: record.times.progressedTime, rungTime: record.times.rungTime,
              answeredTime: record.times.answeredTime, establishedTime: record.times.establishedTime, endedTime: t.unixMilliseconds)
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let start: Start
        let state: CallState
        let input: CallInput
        /// The actions expected, given the machine after the event (for its record).
        let expected: @Sendable (CallStateMachine) -> [CallAction]
        var testDescription: String { name }
    }

    /// An answer to a call whose callee leg connected while ringing (with or without the
    /// early SDP again): answered to both, bob2 ends, bob1's leg is bridged and the call
    /// established at once, with no new answer for the leg.
    static func earlyConnectedAnswerActions(_ machine: CallStateMachine) -> [CallAction] {
        [.notify(.device(alice), .answered(callID: id, time: t.unixMilliseconds)),
         .notify(.device(bob1), .answered(callID: id, time: t.unixMilliseconds)),
         .notify(.device(bob2), .ended(callID: id, cause: .otherDeviceAnswered, error: nil,
                                       details: .init(startedTime: t.unixMilliseconds, endedTime: t.unixMilliseconds))),
         .media(.closeLeg(callID: id, leg: .callee(.device(bob2)))),
         .media(.bridge(callID: id, party: .device(bob1))),
         .notify(.device(alice), .established(callID: id, time: t.unixMilliseconds)),
         .notify(.device(bob1), .established(callID: id, time: t.unixMilliseconds)),
         .record(machine.record)]
    }

    static let rows: [Row] = [
        Row(name: "routing + ring decision: the caller's leg is asked for", start: .routing, state: .initiating,
            input: .routed(.ringDevices([alice, bob1]))) { _ in
            [.media(.answerCaller(callID: id, offer: CallWorld.callerOffer, topology: .relay))]
        },
        Row(name: "routing + media report: ignored (no leg exists)", start: .routing, state: .initiating,
            input: .media(.callerLegReady(sdp: CallWorld.anchorAnswer))) { _ in [] },
        Row(name: "routing + reject: ended, nothing to close", start: .routing, state: .ended,
            input: .routed(.reject(.init(code: .destinationNotFound, message: "destination user not found")))) { machine in
            [.notify(.device(alice), .ended(callID: id, cause: .error, error: .init(code: .destinationNotFound, message: "destination user not found"),
                                             details: callerDetails(machine.record))),
             .record(machine.record)]
        },
        Row(name: "progressing + first ack: the caller rings", start: .progressing, state: .ringing,
            input: .acknowledged(bob1)) { machine in
            [.notify(.device(alice), .ringing(callID: id, time: t.unixMilliseconds)), .record(machine.record)]
        },
        Row(name: "ringing + another device's ack: nothing more", start: .ringing, state: .ringing,
            input: .acknowledged(bob2)) { _ in [] },
        Row(name: "progressing + ack with an early media answer: its leg takes the answer, the caller rings", start: .progressing,
            state: .ringing, input: .acknowledged(bob1, earlyAnswer: CallWorld.deviceAnswer)) { machine in
            [.media(.acceptAnswer(callID: id, party: .device(bob1), answer: CallWorld.deviceAnswer)),
             .notify(.device(alice), .ringing(callID: id, time: t.unixMilliseconds)), .record(machine.record)]
        },
        Row(name: "ringing + another device's ack with an early answer: only its leg takes it", start: .ringing, state: .ringing,
            input: .acknowledged(bob2, earlyAnswer: CallWorld.deviceAnswer)) { _ in
            [.media(.acceptAnswer(callID: id, party: .device(bob2), answer: CallWorld.deviceAnswer))]
        },
        Row(name: "early-connected + the same ack again (resent): nothing", start: .earlyConnected, state: .ringing,
            input: .acknowledged(bob1, earlyAnswer: CallWorld.deviceAnswer)) { _ in [] },
        Row(name: "early-connected + answer without sdp: bridged and established at once, no new answer for the leg",
            start: .earlyConnected, state: .established, input: .answered(bob1, sdp: nil)) { machine in
            earlyConnectedAnswerActions(machine)
        },
        Row(name: "early-connected + answer repeating the early sdp: the same as without", start: .earlyConnected,
            state: .established, input: .answered(bob1, sdp: CallWorld.deviceAnswer)) { machine in
            earlyConnectedAnswerActions(machine)
        },
        Row(name: "ringing + answer: answered to both, the other device ends, its leg closes", start: .ringing, state: .answered,
            input: .answered(bob1, sdp: CallWorld.deviceAnswer)) { machine in
            [.notify(.device(alice), .answered(callID: id, time: t.unixMilliseconds)),
             .notify(.device(bob1), .answered(callID: id, time: t.unixMilliseconds)),
             .notify(.device(bob2), .ended(callID: id, cause: .otherDeviceAnswered, error: nil,
                                           details: .init(startedTime: t.unixMilliseconds, endedTime: t.unixMilliseconds))),
             .media(.closeLeg(callID: id, leg: .callee(.device(bob2)))),
             .media(.acceptAnswer(callID: id, party: .device(bob1), answer: CallWorld.deviceAnswer)),
             .media(.bridge(callID: id, party: .device(bob1))),
             .record(machine.record)]
        },
        Row(name: "answered + caller's leg connected: still answered", start: .answered, state: .answered,
            input: .media(.legConnected(.caller))) { _ in [] },
        Row(name: "progressing + a ringing device's leg fails: it alone ends", start: .progressing, state: .progressing,
            input: .media(.legFailed(.callee(.device(bob2)), reason: "no port"))) { _ in
            [.notify(.device(bob2), .ended(callID: id, cause: .error, error: .init(code: .mediaFailed, message: "media leg failed: no port"),
                                           details: .init(startedTime: t.unixMilliseconds, endedTime: t.unixMilliseconds))),
             .media(.closeLeg(callID: id, leg: .callee(.device(bob2))))]
        },
        Row(name: "progressing + decline: denied to everyone who knew, every leg closed", start: .progressing, state: .ended,
            input: .declined(bob2)) { machine in
            let callee = SignalingMessage.CallDetails(startedTime: t.unixMilliseconds, endedTime: t.unixMilliseconds)
            return [.notify(.device(alice), .ended(callID: id, cause: .denied, error: nil, details: callerDetails(machine.record))),
                    .notify(.device(bob1), .ended(callID: id, cause: .denied, error: nil, details: callee)),
                    .notify(.device(bob2), .ended(callID: id, cause: .denied, error: nil, details: callee)),
                    .media(.closeAll(callID: id)),
                    .record(machine.record)]
        },
        Row(name: "established + DTMF from the caller: toward the answering device's leg", start: .established, state: .established,
            input: .dtmf(alice, digits: "5")) { _ in
            [.media(.sendDTMF(callID: id, leg: .callee(.device(bob1)), digits: "5"))]
        },
        Row(name: "established + the answering device's leg inactive: inactive", start: .established, state: .ended,
            input: .media(.legInactive(.callee(.device(bob1))))) { machine in
            [.notify(.device(alice), .ended(callID: id, cause: .inactive, error: nil, details: callerDetails(machine.record))),
             .notify(.device(bob1), .ended(callID: id, cause: .inactive, error: nil, details: .init(
                startedTime: t.unixMilliseconds, answeredTime: t.unixMilliseconds, establishedTime: t.unixMilliseconds, endedTime: t.unixMilliseconds))),
             .media(.closeAll(callID: id)),
             .record(machine.record)]
        },
    ]

    @Test("Rows", arguments: rows)
    func row(_ row: Row) throws {
        var machine = try Self.machine(row.start)
        let actions = try machine.handle(row.input, now: Self.t)
        #expect(actions == row.expected(machine))
        #expect(machine.state == row.state)
    }

    @Test("Requests that do not fit the state throw and change nothing", arguments: [
        (Start.routing, CallInput.acknowledged(bob1), "call_not_found"),
        (.progressing, .answered(alice, sdp: ""), "call_not_found"),
        (.answered, .answered(bob1, sdp: ""), "invalid_state"),
        (.answered, .declined(bob1), "invalid_state"),
        (.answered, .acknowledged(bob2), "invalid_state"),
        (.ringing, .dtmf(alice, digits: "1"), "invalid_state"),
        (.ringing, .answered(bob1, sdp: nil), "bad_request"),
        (.earlyConnected, .acknowledged(bob1, earlyAnswer: "v=0\r\no=other\r\n"), "invalid_state"),
        (.earlyConnected, .answered(bob1, sdp: "v=0\r\no=other\r\n"), "invalid_state"),
        (.established, .acknowledged(bob1, earlyAnswer: "v=0\r\no=late\r\n"), "invalid_state"),
    ])
    func refusals(start: Start, input: CallInput, code: String) throws {
        var machine = try Self.machine(start)
        let before = machine.record
        let deadline = machine.nextDeadline
        do {
            let actions = try machine.handle(input, now: Self.t)
            Issue.record("no refusal; actions: \(actions)")
        } catch {
            #expect(error.signalingCode.rawValue == code)
        }
        #expect(machine.record == before)
        #expect(machine.nextDeadline == deadline)
    }

    @Test("Each state's deadline: routing, ring, media setup, then only the maximum length")
    func deadlines() throws {
        let configuration = CallConfiguration()
        #expect(try Self.machine(.routing).nextDeadline == Self.t.instant.advanced(by: configuration.routingTimeout))
        #expect(try Self.machine(.ringing).nextDeadline == Self.t.instant.advanced(by: configuration.ringTimeout))
        #expect(try Self.machine(.answered).nextDeadline == Self.t.instant.advanced(by: configuration.mediaSetupTimeout))
        #expect(try Self.machine(.established).nextDeadline == Self.t.instant.advanced(by: configuration.maximumCallLength))
        var ended = try Self.machine(.established)
        _ = try ended.handle(.hungUp(Self.alice), now: Self.t)
        #expect(ended.nextDeadline == nil)
    }
}
