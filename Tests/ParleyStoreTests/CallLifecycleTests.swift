import ParleyCallModel
import ParleyStore
import Testing

/// A call record from start to end, and the rules every store keeps about it.
@Suite struct CallLifecycleTests {
    @Test(arguments: StoreFactory.all) func aCallIsRecordedAsItGoes(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let id = callID(1)
        let created = try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.at(0))
        #expect(created.state == .initiating)
        #expect(try store.call(id: id) == created)

        try store.updateCallState(id: id, to: .progressing, at: T.at(40))
        try store.updateCallState(id: id, to: .ringing, at: T.at(220))
        try store.updateCallState(id: id, to: .ringing, at: T.at(999))  // a second device rings: first time kept
        var record = try #require(try store.call(id: id))
        #expect(record.state == .ringing)
        #expect(record.details == CallTimes(startedTime: T.at(0), progressedTime: T.at(40), rungTime: T.at(220)))
        #expect(record.endCause == nil)
        #expect(record.durationMs == nil)

        try store.updateCallState(id: id, to: .answered, at: T.at(4780))
        try store.updateCallState(id: id, to: .established, at: T.at(4910))
        let midCall = CallLeg(role: .caller, userId: "alice", deviceId: "d1", updatedTime: T.at(10_000), statistics: CallLegStatistics(packetsSent: 250))
        try store.recordLeg(callId: id, midCall)
        record = try #require(try store.call(id: id))
        #expect(record.state == .established)
        #expect(record.legs == [midCall])

        let finalCaller = CallLeg(role: .caller, userId: "alice", deviceId: "d1", updatedTime: T.at(64_780), statistics: .sample)
        let finalCallee = CallLeg(role: .callee, userId: "bob", deviceId: "d2", updatedTime: T.at(64_780), statistics: .sample)
        let finished = try store.finishCall(id: id, cause: .hungUp, at: T.at(64_780), legs: [finalCallee, finalCaller])
        #expect(finished.state == .ended)
        #expect(finished.endCause == .hungUp)
        #expect(finished.error == nil)
        #expect(finished.durationMs == 60_000)
        #expect(finished.details == CallTimes(
            startedTime: T.at(0), progressedTime: T.at(40), rungTime: T.at(220), answeredTime: T.at(4780),
            establishedTime: T.at(4910), endedTime: T.at(64_780)))
        #expect(finished.legs == [finalCaller, finalCallee])  // caller first
        #expect(try store.call(id: id) == finished)
        #expect(try store.call(id: id, applicationKey: "app") == finished)
        #expect(try store.call(id: id, applicationKey: "other") == nil)
    }

    @Test(arguments: StoreFactory.all) func bothEndsAreAddressesOfTheirDirectionsKinds(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let created = try store.createCall(
            id: callID(1), applicationKey: "app", caller: .user("alice"), callee: .user("bob"), direction: .appToApp,
            startedTime: T.at(0))
        #expect(created.caller == .user("alice") && created.callee == .user("bob") && created.direction == .appToApp)
        #expect(try store.call(id: callID(1)) == created)
        for (caller, callee): (PartyAddress, PartyAddress) in [
            (.user("alice"), .phone("+46701234567")), (.user("alice"), .sip("sip:bob@pbx.example.com")),
            (.user("alice"), .conference("standup")), (.phone("+46701234567"), .user("bob")),
        ] {
            let refused = #expect(throws: StoreError.self) {
                try store.createCall(id: callID(2), applicationKey: "app", caller: caller, callee: callee, direction: .appToApp,
                                     startedTime: T.at(1))
            }
            #expect(refused?.kind == .invalidArgument)
        }
        #expect(try store.call(id: callID(2)) == nil)
    }

    @Test(arguments: StoreFactory.all) func anEndedCallNoLongerChanges(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        let finished = try store.completedCall(callID(2), start: T.base)
        let again = #expect(throws: StoreError.self) { try store.finishCall(id: callID(2), cause: .canceled, at: T.at(999_999)) }
        #expect(again?.kind == .callEnded)
        let state = #expect(throws: StoreError.self) { try store.updateCallState(id: callID(2), to: .ringing, at: T.base) }
        #expect(state?.kind == .callEnded)
        let leg = #expect(throws: StoreError.self) {
            try store.recordLeg(callId: callID(2), CallLeg(role: .caller, userId: "alice", updatedTime: T.base, statistics: .init()))
        }
        #expect(leg?.kind == .callEnded)
        #expect(try store.call(id: callID(2)) == finished)
    }

    @Test(arguments: StoreFactory.all) func unknownCallsAndApplicationsAreNotFound(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        #expect(try store.call(id: callID(9)) == nil)
        let update = #expect(throws: StoreError.self) { try store.updateCallState(id: callID(9), to: .ringing, at: T.base) }
        #expect(update?.kind == .notFound)
        #expect(update?.message == "call \(callID(9)) not found")
        let finish = #expect(throws: StoreError.self) { try store.finishCall(id: callID(9), cause: .hungUp, at: T.base) }
        #expect(finish?.kind == .notFound)
        let leg = #expect(throws: StoreError.self) {
            try store.recordLeg(callId: callID(9), CallLeg(role: .caller, userId: "alice", updatedTime: T.base, statistics: .init()))
        }
        #expect(leg?.kind == .notFound)
        let app = #expect(throws: StoreError.self) {
            try store.createCall(id: callID(9), applicationKey: "nope", caller: "a", callee: "b", startedTime: T.base)
        }
        #expect(app?.kind == .notFound)
    }

    @Test(arguments: StoreFactory.all) func duplicateCallIdIsAlreadyExists(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.createCall(id: callID(3), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        let error = #expect(throws: StoreError.self) {
            try store.createCall(id: callID(3), applicationKey: "app", caller: "bob", callee: "alice", startedTime: T.base)
        }
        #expect(error?.kind == .alreadyExists)
    }

    @Test(arguments: StoreFactory.all) func causeAndErrorMustAgree(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.createCall(id: callID(4), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        let missing = #expect(throws: StoreError.self) { try store.finishCall(id: callID(4), cause: .error, at: T.base) }
        #expect(missing?.kind == .invalidArgument)
        let extra = #expect(throws: StoreError.self) {
            try store.finishCall(id: callID(4), cause: .denied, error: CallError(code: "x", message: "y"), at: T.base)
        }
        #expect(extra?.kind == .invalidArgument)
        let ended = #expect(throws: StoreError.self) { try store.updateCallState(id: callID(4), to: .ended, at: T.base) }
        #expect(ended?.kind == .invalidArgument)
        #expect(try store.call(id: callID(4))?.state == .initiating)
    }

    @Test(arguments: StoreFactory.all) func anUnknownCalleeFailsAtOnceWithZeroDuration(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        #expect(try !store.isKnownUser(applicationKey: "app", userId: "dave"))
        try store.createCall(id: callID(5), applicationKey: "app", caller: "alice", callee: "dave", startedTime: T.at(0))
        let failed = try store.finishCall(
            id: callID(5), cause: .error, error: CallError(code: "destination_not_found", message: "destination user not found"),
            at: T.at(3))
        #expect(failed.endCause == .error)
        #expect(failed.error == CallError(code: "destination_not_found", message: "destination user not found"))
        #expect(failed.durationMs == 0)
        #expect(failed.details == CallTimes(startedTime: T.at(0), endedTime: T.at(3)))
        #expect(failed.legs.isEmpty)
    }

    @Test(arguments: StoreFactory.all) func everyEndCauseRoundTrips(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        for (index, cause) in CallEndCause.allCases.enumerated() {
            let id = callID(100 + index)
            try store.createCall(id: id, applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
            let error = cause == .error ? CallError(code: "media_failed", message: "no media") : nil
            try store.finishCall(id: id, cause: cause, error: error, at: T.at(10))
            let record = try #require(try store.call(id: id))
            #expect(record.endCause == cause)
            #expect(record.error == error)
        }
        let counts = try store.callCountsByState()
        #expect(counts == [.ended: CallEndCause.allCases.count])
    }

    @Test(arguments: StoreFactory.all) func nonFiniteStatisticsAreStoredAsZeroOrAbsent(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.createCall(id: callID(6), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        var statistics = CallLegStatistics(inboundJitterMilliseconds: .nan, roundTripTimeMilliseconds: .infinity)
        statistics.outboundFractionLost = .nan
        try store.recordLeg(callId: callID(6), CallLeg(role: .callee, userId: "bob", updatedTime: T.base, statistics: statistics))
        let leg = try #require(try store.call(id: callID(6))?.legs.first)
        #expect(leg.statistics.inboundJitterMilliseconds == 0)
        #expect(leg.statistics.roundTripTimeMilliseconds == nil)
        #expect(leg.statistics.outboundFractionLost == nil)
    }

    @Test func lossRatioCountsLostOverExpected() {
        #expect(CallLegStatistics.sample.inboundLossRatio == 0.01)
        #expect(CallLegStatistics().inboundLossRatio == 0)
        #expect(CallLegStatistics(packetsReceived: 10, inboundCumulativeLost: -3).inboundLossRatio == 0)
    }

    @Test(arguments: StoreFactory.all) func callCountsByStateForMetrics(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.withApplication()
        try store.completedCall(callID(1), start: T.base)
        try store.createCall(id: callID(2), applicationKey: "app", caller: "alice", callee: "bob", startedTime: T.base)
        try store.createCall(id: callID(3), applicationKey: "app", caller: "bob", callee: "alice", startedTime: T.base)
        try store.updateCallState(id: callID(3), to: .ringing, at: T.at(5))
        #expect(try store.callCountsByState() == [.ended: 1, .initiating: 1, .ringing: 1])
        #expect(try store.callCountsByState(applicationKey: "other") == [:])
    }
}
