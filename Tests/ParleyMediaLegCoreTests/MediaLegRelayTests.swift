import ParleyWireCore
import ParleyCrypto
import ParleyICECore
import ParleyMediaCore
@testable import ParleyMediaLegCore
import ParleyRTP
import ParleyTestSupport
import Testing

/// A server anchoring a call: device A ↔ relay leg A, relay leg B ↔ device B, with RTP
/// forwarded between the two relay legs without transcoding, as parleyd will do.
@Suite struct MediaLegRelayTests {
    /// A class, because a `MediaLegCore` cannot be copied into an array.
    final class Node {
        var core: MediaLegCore
        let address: ICETransportAddress
        init(core: consuming MediaLegCore, address: ICETransportAddress) {
            self.core = core
            self.address = address
        }
    }

    @Test func twoAnchoredLegsForwardOpusBothWays() throws {
        let start = ContinuousClock.now
        var now = start
        func address(_ port: UInt16) -> ICETransportAddress { ICETransportAddress(ip: .ipv4(0x7F00_0001), port: port) }
        func configuration(_ mode: MediaLegConfiguration.ICEMode, relay: Bool) throws -> MediaLegConfiguration {
            var configuration = MediaLegConfiguration(iceMode: mode, certificate: try DTLSCertificate.generate())
            configuration.codecs = [.opus]
            configuration.mediaMode = relay ? .forward : .decode
            return configuration
        }
        func core(_ mode: MediaLegConfiguration.ICEMode, relay: Bool, port: UInt16, seed: UInt64) throws -> MediaLegCore {
            MediaLegCore(configuration: try configuration(mode, relay: relay), localAddresses: [address(port)], now: ClockReading(instant: start, unixNanoseconds: 1_800_000_000_000_000_000), random: SeededGenerator(seed: seed))
        }
        // Index 0: device A, 1: server leg A, 2: server leg B, 3: device B.
        let nodes = [
            Node(core: try core(.full, relay: false, port: 1000, seed: 1), address: address(1000)),
            Node(core: try core(.lite, relay: true, port: 2000, seed: 2), address: address(2000)),
            Node(core: try core(.lite, relay: true, port: 2001, seed: 3), address: address(2001)),
            Node(core: try core(.full, relay: false, port: 3000, seed: 4), address: address(3000)),
        ]
        // The caller offers to the server; the server offers to the callee.
        let callerOffer = try nodes[0].core.makeOffer()
        try nodes[0].core.acceptAnswer(try nodes[1].core.answer(offer: callerOffer))
        let calleeOffer = try nodes[2].core.makeOffer()
        try nodes[2].core.acceptAnswer(try nodes[3].core.answer(offer: calleeOffer))

        var inFlight: [(due: ContinuousClock.Instant, bytes: [UInt8], from: ICETransportAddress, to: ICETransportAddress)] = []
        var forwarded = 0
        func perform(_ actions: [MediaLegAction], at index: Int) {
            for action in actions {
                switch action {
                case .send(let bytes, let from, let to):
                    inFlight.append((now + .milliseconds(2), bytes, from, to))
                case .receivedRTP(let packet):
                    // Server legs 1 and 2 forward to each other.
                    let other = index == 1 ? 2 : 1
                    forwarded += 1
                    perform(nodes[other].core.relay(packet, now: now), at: other)
                default:
                    break
                }
            }
        }
        for index in nodes.indices { perform(try nodes[index].core.start(now: now), at: index) }
        var toneA = ToneGenerator(frequency: 440, amplitude: 0.3, sampleRate: 48_000)
        var toneB = ToneGenerator(frequency: 1000, amplitude: 0.3, sampleRate: 48_000)
        var heardByA: [Int16] = []
        var heardByB: [Int16] = []
        for step in 1...4000 {  // 4 s of virtual time in 1 ms steps
            now = start + .milliseconds(step)
            while let index = inFlight.firstIndex(where: { $0.due <= now }) {
                let item = inFlight.remove(at: index)
                guard let target = nodes.firstIndex(where: { $0.address == item.to }) else { continue }
                perform(nodes[target].core.receive(item.bytes, from: item.from, on: item.to, now: now), at: target)
            }
            for index in nodes.indices {
                if let deadline = nodes[index].core.nextDeadline, deadline <= now { perform(nodes[index].core.handleTimeout(now: now), at: index) }
            }
            if step % 20 == 0 {
                perform(try nodes[0].core.sendAudio(AudioFrame(samples: toneA.next(count: 960), sampleRate: 48_000), now: now), at: 0)
                perform(try nodes[3].core.sendAudio(AudioFrame(samples: toneB.next(count: 960), sampleRate: 48_000), now: now), at: 3)
                heardByA += nodes[0].core.playout(now: now)
                heardByB += nodes[3].core.playout(now: now)
            }
        }
        for node in nodes { #expect(node.core.state == .connected) }
        #expect(forwarded > 300)
        let a = FrequencyAnalysis.dominantFrequency(samples: Array(heardByA.suffix(48_000)), sampleRate: 48_000) ?? 0
        let b = FrequencyAnalysis.dominantFrequency(samples: Array(heardByB.suffix(48_000)), sampleRate: 48_000) ?? 0
        #expect(abs(a - 1000) < 10)
        #expect(abs(b - 440) < 10)
        #expect(nodes[3].core.statistics.framesPlayedFromPackets > 150)
        // The server never decoded: its legs played nothing.
        #expect(nodes[1].core.statistics.framesPlayedFromPackets == 0)
        #expect(nodes[1].core.statistics.rtp.packetsReceived > 150 && nodes[2].core.statistics.rtp.packetsSent > 150)
    }
}
