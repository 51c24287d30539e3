import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import ParleySignaling
import Testing

extension RealTimeMediaTests {
    /// `call.talking` through a whole `ParleyClient` over scripted engines: the delegate's
    /// `call(_:didChangeTalkers:)`, the mediator's observers and `ParleyCall.talkers`.
    @Suite struct ParleyClientConferenceTalkersTests {
        /// Records what a call's delegate hears, as lines; talkers as `talking user/id,...`.
        final class TalkerLog: ParleyCallDelegate, @unchecked Sendable {
            // @unchecked: `lines` is `Locked`.
            let lines = Locked<[String]>([])
            /// `call.talkers` as each callback saw it.
            let seen = Locked<[[ParleyConferenceTalker]]>([])
            func callDidEstablish(_ call: ParleyCall) { lines.withLock { $0.append("establish") } }
            func callDidEnd(_ call: ParleyCall) { lines.withLock { $0.append("end \(call.details.endCause.rawValue)") } }
            func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker]) {
                seen.withLock { $0.append(call.talkers) }
                lines.withLock { $0.append("talking " + talkers.map { "\($0.userId)/\($0.participantId)" }.joined(separator: ",")) }
            }
        }

        final class ObserverLog: ParleyCallObserver, @unchecked Sendable {
            // @unchecked: `lines` is `Locked`.
            let lines = Locked<[String]>([])
            func call(_ call: ParleyCall, didChangeTalkers talkers: [ParleyConferenceTalker]) {
                lines.withLock { $0.append("talking " + talkers.map(\.userId).joined(separator: ",")) }
            }
        }

        static let bobCall = "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08"

        @Test func aRoomCallHearsWhoTalksAndKeepsTheLatestList() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await ParleyClientSIPCallTests.startedClient(engines)
            let log = TalkerLog()
            let call = try client.callClient.callConference(withId: "standup").get()
            call.delegate = log
            #expect(call.talkers.isEmpty)
            _ = try await ParleyClientSIPCallTests.establish(call, engines)
            let own = call.callId
            engines.deliver(.callTalking(.init(callID: own, talking: [.init(callID: Self.bobCall, userID: "bob")])))
            engines.deliver(.callTalking(.init(callID: own, talking: [.init(callID: own, userID: "alice"), .init(callID: Self.bobCall, userID: "bob")])))
            // Another call's talkers are not this call's.
            engines.deliver(.callTalking(.init(callID: "5b8e2d90-4c1f-4a7b-9e36-d20f8a1c5e74", talking: [.init(callID: Self.bobCall, userID: "bob")])))
            engines.deliver(.callTalking(.init(callID: own, talking: [])))
            #expect(await engines.wait { log.lines.current.count == 4 })
            #expect(log.lines.current == ["establish", "talking bob/\(Self.bobCall)", "talking alice/\(own),bob/\(Self.bobCall)", "talking "])
            #expect(log.seen.current == [
                [.init(participantId: Self.bobCall, userId: "bob")],
                [.init(participantId: own, userId: "alice"), .init(participantId: Self.bobCall, userId: "bob")],
                [],
            ], "call.talkers is the list the callback was given")
            engines.deliver(.callTalking(.init(callID: own, talking: [.init(callID: Self.bobCall, userID: "bob")])))
            #expect(await engines.wait { call.talkers == [.init(participantId: Self.bobCall, userId: "bob")] })
            engines.deliver(.callEnded(.init(callID: own, cause: .hungUp, details: .init(startedTime: 1, endedTime: 2))))
            #expect(await engines.wait { log.lines.current.last == "end hungUp" })
            client.terminateGracefully()
        }

        /// Only a room call has talkers: a `call.talking` for a call to a user is dropped.
        @Test func aCallToAUserIgnoresTalkers() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await ParleyClientSIPCallTests.startedClient(engines)
            let log = TalkerLog()
            let call = try client.callClient.callUser(withId: "bob").get()
            call.delegate = log
            _ = try await ParleyClientSIPCallTests.establish(call, engines)
            engines.deliver(.callTalking(.init(callID: call.callId, talking: [.init(callID: Self.bobCall, userID: "bob")])))
            engines.deliver(.callEnded(.init(callID: call.callId, cause: .hungUp, details: .init(startedTime: 1, endedTime: 2))))
            #expect(await engines.wait { log.lines.current.last == "end hungUp" })
            #expect(log.lines.current == ["establish", "end hungUp"])
            #expect(call.talkers.isEmpty)
            client.terminateGracefully()
        }

        @Test func theMediatorsObserversHearTalkers() async throws {
            let engines = ScriptedEngines()
            let (client, _) = try await ParleyClientSIPCallTests.startedClient(engines)
            let mediator = ParleyCallMediator(client: client)
            let observer = ObserverLog()
            mediator.addObserver(observer)
            let call = try mediator.callConference(withId: "standup").get()
            _ = try await ParleyClientSIPCallTests.establish(call, engines)
            engines.deliver(.callTalking(.init(callID: call.callId, talking: [.init(callID: Self.bobCall, userID: "bob")])))
            #expect(await engines.wait { observer.lines.current == ["talking bob"] })
            client.terminateGracefully()
        }
    }
}
