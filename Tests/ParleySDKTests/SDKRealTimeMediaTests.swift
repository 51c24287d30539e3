import Foundation
import ParleyMedia
import ParleyMediaLeg
@testable import ParleySDK
import ParleySignaling
import Testing

/// SDK tests that check audio in real time. The name matches the Makefile's
/// `RealTimeMediaTests` filter, so `make test` runs them in its second, quieter pass.
/// Transport tests with `ScriptedPeer`, not end to end.
@Suite(.serialized) struct SDKRealTimeMediaTests {
    @Test func anIncomingCallIsAnsweredAndItsAudioRecorded() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let delegate = RecordingDelegate()
        let client = try ParleyClientTransportTests.makeClient(peer, delegate)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sdk-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        client.audioController.source = .tone(frequency: 440)
        client.audioController.sink = .wavFile(path: path)
        client.start()
        #expect(await delegate.wait(for: "started"))
        let callID = UUID().uuidString.lowercased()
        try await peer.ring(callID: callID, from: "alice", frequency: 1000)
        #expect(await delegate.wait(for: "incoming alice ringing"))
        #expect(await delegate.wait(for: "establish"))
        #expect(peer.messages(ofType: .callAck).count == 1)
        try await Task.sleep(for: .seconds(2))
        let call = try #require(delegate.calls.current.first)
        #expect(call.callId == callID && call.headers == ["topic": "test"] && call.direction == .incoming)
        call.hangup()
        #expect(await delegate.wait(for: "end hungUp"))
        try await Task.sleep(for: .milliseconds(500))
        let heard = try WAVFile.read(path: path).samples
        #expect(heard.count > 48_000, "at least a second recorded: \(heard.count)")
        let frequency = FrequencyAnalysis.dominantFrequency(samples: Array(heard.suffix(48_000)), sampleRate: 48_000) ?? 0
        #expect(abs(frequency - 1000) < 10, "heard \(frequency) Hz")
        if let leg = peer.serverLeg.current, let sink = await leg.takeSink() as? WAVFileSink {
            let heardByPeer = sink.file.samples
            let peerFrequency = FrequencyAnalysis.dominantFrequency(samples: Array(heardByPeer.suffix(48_000)), sampleRate: 48_000) ?? 0
            #expect(abs(peerFrequency - 440) < 10, "the peer heard \(peerFrequency) Hz")
            await leg.close()
        }
        client.terminateGracefully()
    }
}
