import ParleyCrypto
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyMediaLegIO
import ParleyNetLinux
import ParleyRTP
import ParleyTestSupport
import Testing

extension RealTimeMediaTests {
    /// `MediaLeg.sendDTMF`: RFC 4733 events paced in real time from one loopback leg to
    /// another, which reports them as `receivedTelephoneEvent`.
    @Suite struct MediaLegDTMFTests {
        struct Arrival: Sendable {
            var event: TelephoneEvent
            var timestamp: UInt32
            var at: ContinuousClock.Instant
        }

        @Test func tonesArriveInOrderWithTheirDurationsAndGaps() async throws {
            let loop = try EventLoop(name: "dtmf-test")
            defer { loop.shutdown() }
            let (server, device) = try await MediaLegLoopbackTests.connectedPair(on: loop)
            let arrivals = LockedBox<[Arrival]>([])
            await server.observeTelephoneEvents { event, timestamp in
                arrivals.withLock { $0.append(Arrival(event: event, timestamp: timestamp, at: .now)) }
            }
            let started = ContinuousClock.now
            let sent = await device.sendDTMF("1*#D", duration: .milliseconds(100), gap: .milliseconds(70))
            let took = ContinuousClock.now - started
            #expect(sent)
            // Four tones of 100 ms and three gaps of 70 ms: paced, not sent at once.
            #expect(took >= .milliseconds(600) && took < .seconds(3), "\(took)")
            // The last end packets were sent as sendDTMF returned: give them the loopback trip.
            try await Task.sleep(for: .milliseconds(200))
            await server.close()
            await device.close()

            let seen = arrivals.withLock { $0 }
            // Each tone once as it begins and once as it ends (the repeats are not reported).
            #expect(seen.map { "\($0.event.key.map(String.init) ?? "?")\($0.event.isEnd ? "." : "")" } == ["1", "1.", "*", "*.", "#", "#.", "D", "D."])
            guard seen.count == 8 else { return }
            for index in stride(from: 0, to: 8, by: 2) {
                let begin = seen[index], end = seen[index + 1]
                // One tone: one timestamp; its end says 100 ms at 48 kHz (5 packets of 960).
                #expect(begin.timestamp == end.timestamp)
                #expect(end.event.duration == 4800, "\(end.event)")
                #expect(begin.event.duration == 960, "\(begin.event)")
                #expect(end.at - begin.at >= .milliseconds(50), "a tone lasts about its duration")
                if index > 0 {
                    #expect(begin.timestamp != seen[index - 1].timestamp, "each tone starts an event of its own")
                    #expect(begin.at - seen[index - 1].at >= .milliseconds(30), "tones are separated by the gap")
                }
            }
        }

        @Test func refusesBadTonesAndALegThatIsNotConnected() async throws {
            let loop = try EventLoop(name: "dtmf-test")
            defer { loop.shutdown() }
            let lone = try MediaLeg(
                configuration: MediaLegConfiguration(iceMode: .full, certificate: try DTLSCertificate.generate()),
                bindingTo: [.ipv4Loopback(port: 0)], on: loop)
            _ = try await lone.makeOffer()
            #expect(await lone.sendDTMF("1") == false, "not connected")
            await lone.close()

            let (server, device) = try await MediaLegLoopbackTests.connectedPair(on: loop)
            let arrivals = LockedBox<Int>(0)
            await server.observeTelephoneEvents { _, _ in arrivals.withLock { $0 += 1 } }
            #expect(await device.sendDTMF("12x") == false, "x is no DTMF tone")
            #expect(await device.sendDTMF("") == false)
            #expect(await device.sendDTMF("a") == false, "lower-case letters are refused")
            try await Task.sleep(for: .milliseconds(100))
            #expect(arrivals.withLock { $0 } == 0, "a refused string sends nothing, not even its valid tones")
            await server.close()
            await device.close()
        }
    }
}
