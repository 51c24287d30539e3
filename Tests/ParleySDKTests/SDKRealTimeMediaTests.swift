import Foundation
import ParleyMediaCore
import ParleyMediaLegCore
import ParleySDK
@_spi(ParleyEngines) @testable import ParleySDKCore
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

    /// `callDidEnd` comes once the call's media has closed: the `.wavFile` recording is
    /// already complete on disk and the final statistics are in place. (A process that
    /// exits on `callDidEnd`, like `parley`, used to leave an empty recording.)
    @Test func theRecordingIsCompleteWhenCallDidEndIsCalled() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sdk-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = RecordingDelegate()
        let atEnd = EndInspector(path: path)
        let client = try ParleyClientTransportTests.makeClient(peer, delegate)
        client.audioController.source = .tone(frequency: 440)
        client.audioController.sink = .wavFile(path: path)
        client.start()
        #expect(await delegate.wait(for: "started"))
        try await peer.ring(callID: UUID().uuidString.lowercased(), from: "alice", frequency: 1000)
        #expect(await delegate.wait(for: "establish"))
        try await Task.sleep(for: .seconds(2))
        let call = try #require(delegate.calls.current.first)
        call.delegate = atEnd
        call.hangup()
        for _ in 0..<500 where atEnd.samplesAtEnd.current == nil { try await Task.sleep(for: .milliseconds(10)) }
        let samples = try #require(atEnd.samplesAtEnd.current, "callDidEnd was called")
        #expect(samples > 48_000, "at callDidEnd the file already holds the call: \(samples) samples (-1: no file)")
        #expect(atEnd.packetsAtEnd.current ?? 0 > 50, "the final statistics are in place")
        client.terminateGracefully()
    }

    /// `terminateGracefully(completion:)` during a call: the call ends, its recording is
    /// written and the close frame sent before the completion runs.
    @Test func terminateCompletesOnceTheCallsRecordingIsWritten() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sdk-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = RecordingDelegate()
        let client = try ParleyClientTransportTests.makeClient(peer, delegate)
        client.audioController.sink = .wavFile(path: path)
        client.start()
        #expect(await delegate.wait(for: "started"))
        try await peer.ring(callID: UUID().uuidString.lowercased(), from: "alice", frequency: 1000)
        #expect(await delegate.wait(for: "establish"))
        try await Task.sleep(for: .seconds(1))
        let done = Locked<(lines: [String], samples: Int)?>(nil)
        client.terminateGracefully { [delegate] in
            let samples = (try? WAVFile.read(path: path).samples.count) ?? -1
            done.withLock { $0 = (delegate.lines.current, samples) }
        }
        for _ in 0..<1000 where done.current == nil { try await Task.sleep(for: .milliseconds(10)) }
        let outcome = try #require(done.current, "the completion ran")
        #expect(outcome.lines.last == "end hungUp", "the call's end came first: \(outcome.lines)")
        #expect(outcome.samples > 24_000, "the recording was written: \(outcome.samples) samples")
        #expect(!client.isStarted)
    }
}

/// A call delegate that looks at the recording and statistics at the moment `callDidEnd` comes.
final class EndInspector: ParleyCallDelegate, @unchecked Sendable {
    // @unchecked: state is `Locked`.
    let path: String
    let samplesAtEnd = Locked<Int?>(nil)
    let packetsAtEnd = Locked<Int?>(nil)
    init(path: String) { self.path = path }
    func callDidEnd(_ call: ParleyCall) {
        packetsAtEnd.withLock { $0 = Int(call.statistics.packetsReceived) }
        samplesAtEnd.withLock { $0 = (try? WAVFile.read(path: path).samples.count) ?? -1 }
    }
}

extension SDKRealTimeMediaTests {
    /// `terminateGracefully()` and the app lets go of the client at once: the call's
    /// media still closes and its recording is written (the close holds the client and
    /// its media loop until then), and the client is freed afterwards.
    @Test func aRecordingIsWrittenEvenWhenTheClientIsDroppedAfterTerminate() async throws {
        let peer = try ScriptedPeer()
        defer { peer.shutdown() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sdk-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let delegate = RecordingDelegate()
        var client: ParleyClient? = try ParleyClientTransportTests.makeClient(peer, delegate)
        weak let dropped = client
        client?.audioController.sink = .wavFile(path: path)
        client?.start()
        #expect(await delegate.wait(for: "started"))
        try await peer.ring(callID: UUID().uuidString.lowercased(), from: "alice", frequency: 1000)
        #expect(await delegate.wait(for: "establish"))
        try await Task.sleep(for: .seconds(1))
        client?.terminateGracefully()
        client = nil
        #expect(await delegate.wait(for: "end hungUp"))
        let samples = (try? WAVFile.read(path: path).samples.count) ?? -1
        #expect(samples > 24_000, "the recording was written: \(samples) samples")
        for _ in 0..<500 where dropped != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(dropped == nil, "the client is freed once its media closed")
    }
}
