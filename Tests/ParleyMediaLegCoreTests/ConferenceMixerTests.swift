import ParleyICECore
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyRTP
import ParleySDP
import Testing

/// The conference topology with real legs on a virtual clock (`ConferenceHarness`): N-1
/// by frequency through Opus and G.711, the shared encoding counted and seen on the wire,
/// mute, hold, a leg alone, talking events, DTMF, bounded catch-up.
@Suite struct ConferenceMixerTests {
    typealias H = ConferenceHarness

    static func configuration(rate: Int = 16_000, maximumTalkers: Int = 3) -> ConferenceMixer<Int>.Configuration {
        var configuration = ConferenceMixer<Int>.Configuration()
        configuration.mixer.sampleRate = rate
        configuration.mixer.maximumTalkers = maximumTalkers
        return configuration
    }

    /// The room's rate and its legs' audio rate: equal, as parleyd makes them (libopus
    /// decodes to and encodes from the room's rate), or the legs at 48 kHz in a 16 kHz room
    /// (the mixer resamples each way).
    @Test(arguments: [(16_000, 16_000), (48_000, 48_000), (16_000, 48_000)])
    func everyoneHearsEveryOtherTalkerAndNoTalkerHearsItself(rate: Int, legRate: Int) throws {
        let tones: [Double?] = [500, 800, 1200, nil, nil]
        let h = try H(codecs: Array(repeating: .opus, count: 5), tones: tones, configuration: Self.configuration(rate: rate),
                      legAudioRate: legRate)
        try h.run(milliseconds: 2000)
        #expect(h.mixer.withLeg(3) { $0.encoderConfiguration?.audioRate } == legRate)
        #expect(Set(h.mixer.talkers) == [0, 1, 2])
        let sent = H.sentLevel()
        for participant in 0..<5 {
            for (talker, frequency) in tones.enumerated() {
                guard let frequency else { continue }
                let level = h.level(participant, at: frequency)
                if talker == participant {
                    #expect(level < sent - 40, "\(participant) hears itself at \(level) dBFS")
                } else {
                    #expect(abs(level - sent) < 3, "\(participant) hears \(frequency) Hz at \(level) dBFS, sent at \(sent)")
                }
            }
        }
        // Three talkers and one configuration among the listeners: four encodes a tick.
        #expect(h.encodes.suffix(50).allSatisfy { $0 == .init(shared: 1, talker: 3) }, "\(h.encodes.suffix(3))")
        #expect(h.mixer.counters.encodeFailures == 0 && h.mixer.skippedTicks == 0)
    }

    @Test func eightLegsWithTwoTalkersCostThreeEncodesATick() throws {
        let tones: [Double?] = [600, 1000, nil, nil, nil, nil, nil, nil]
        let h = try H(codecs: Array(repeating: .opus, count: 8), tones: tones, configuration: Self.configuration())
        try h.run(milliseconds: 2000)
        #expect(h.mixer.talkers.count == 2)
        // After the attack (and the first packets' way through the jitter buffers), every
        // tick encodes the shared mix once and each talker's N-1 mix: 3, not 8.
        let settled = h.encodes.suffix(60)
        #expect(settled.allSatisfy { $0 == .init(shared: 1, talker: 2) && $0.total == 3 }, "\(settled.prefix(3))")
        #expect(h.mixer.counters.sharedEncodes <= UInt64(h.encodes.count))
        #expect(h.mixer.counters.sharedFramesSent >= 6 * 60)
        // On the wire: every listener got the same payload in each tick; the talkers' differ.
        let listeners = (2..<8).map { h.participants[$0].audioPayloads.suffix(40) }
        for other in listeners.dropFirst() { #expect(Array(other) == Array(listeners[0])) }
        let talker0 = Array(h.participants[0].audioPayloads.suffix(40))
        let talker1 = Array(h.participants[1].audioPayloads.suffix(40))
        #expect(talker0 != Array(listeners[0]) && talker1 != Array(listeners[0]) && talker0 != talker1)
        // Each leg's stream is still its own: its SSRC, numbering without a gap.
        let ssrcs = Set(h.participants.compactMap { $0.received.last?.packet.ssrc })
        #expect(ssrcs.count == 8)
        for participant in h.participants {
            let packets = participant.received.map(\.packet)
            for (a, b) in zip(packets, packets.dropFirst()) {
                #expect(b.sequenceNumber == a.sequenceNumber &+ 1 && b.timestamp == a.timestamp &+ 960)
            }
        }
        for listener in 2..<8 {
            #expect(abs(h.level(listener, at: 600) - H.sentLevel()) < 3 && abs(h.level(listener, at: 1000) - H.sentLevel()) < 3)
        }
    }

    @Test func opusAndG711LegsShareARoom() throws {
        let codecs: [AudioCodec] = [.opus, .opus, .opus, .opus, .pcmu, .pcmu, .pcma, .pcma]
        let tones: [Double?] = [600, nil, nil, nil, 1000, nil, nil, nil]
        let h = try H(codecs: codecs, tones: tones, configuration: Self.configuration())
        try h.run(milliseconds: 2000)
        #expect(Set(h.mixer.talkers) == [0, 4])
        // One shared encode per configuration among the listeners (Opus, PCMU, PCMA).
        #expect(h.encodes.suffix(50).allSatisfy { $0 == .init(shared: 3, talker: 2) }, "\(h.encodes.suffix(3))")
        let sent = H.sentLevel()
        #expect(abs(h.level(0, at: 1000) - sent) < 3 && h.level(0, at: 600) < sent - 40)
        #expect(abs(h.level(4, at: 600) - sent) < 3 && h.level(4, at: 1000) < sent - 30)
        for listener in [1, 2, 3, 5, 6, 7] {
            #expect(abs(h.level(listener, at: 600) - sent) < 3, "\(listener): \(h.level(listener, at: 600))")
            #expect(abs(h.level(listener, at: 1000) - sent) < 3, "\(listener): \(h.level(listener, at: 1000))")
        }
        #expect(Array(h.participants[6].audioPayloads.suffix(30)) == Array(h.participants[7].audioPayloads.suffix(30)))
        #expect(h.participants[6].audioPayloads.last?.count == 160)
    }

    @Test func muteRemovesATalkerAndUnmuteBringsItBack() throws {
        let h = try H(codecs: [.opus, .opus, .opus], tones: [500, 900, nil], configuration: Self.configuration())
        try h.run(milliseconds: 1000)
        let sent = H.sentLevel()
        #expect(abs(h.level(2, at: 900) - sent) < 3)
        try h.mixer.setMuted(true, leg: 1)
        #expect(h.mixer.isMuted(1) == true)
        try h.run(milliseconds: 1500)
        #expect(h.mixer.talkers == [0])
        #expect(h.level(2, at: 900, lastMilliseconds: 1000) < sent - 40, "\(h.level(2, at: 900))")
        #expect(h.level(0, at: 900, lastMilliseconds: 1000) < sent - 40)
        #expect(abs(h.level(2, at: 500) - sent) < 3)
        // Muted, it still hears the room.
        #expect(abs(h.level(1, at: 500) - sent) < 3)
        try h.mixer.setMuted(false, leg: 1)
        try h.run(milliseconds: 1500)
        #expect(Set(h.mixer.talkers) == [0, 1])
        #expect(abs(h.level(2, at: 900) - sent) < 3 && abs(h.level(0, at: 900) - sent) < 3)
    }

    @Test func onHoldTakesALegOutAndPlaysItsHoldSource() throws {
        let h = try H(codecs: [.opus, .pcmu, .opus], tones: [500, 900, nil], configuration: Self.configuration())
        try h.run(milliseconds: 1000)
        let sent = H.sentLevel()
        try h.mixer.setOnHold(true, leg: 1, source: ToneSource(frequency: 300, amplitude: 0.2, sampleRate: 16_000))
        try h.run(milliseconds: 1500)
        #expect(h.mixer.isOnHold(1) == true && h.mixer.talkers == [0])
        // Out of the mix: nobody hears it.
        #expect(h.level(0, at: 900) < sent - 40 && h.level(2, at: 900) < sent - 40)
        // It hears the hold source, not the room.
        #expect(abs(h.level(1, at: 300) - H.sentLevel(amplitude: 0.2)) < 3, "\(h.level(1, at: 300))")
        #expect(h.level(1, at: 500) < sent - 30)
        #expect(h.encodes.last?.hold == 1)
        try h.mixer.setOnHold(false, leg: 1)
        try h.run(milliseconds: 1500)
        #expect(Set(h.mixer.talkers) == [0, 1])
        #expect(abs(h.level(1, at: 500) - sent) < 3 && h.level(1, at: 300) < sent - 30)
        #expect(abs(h.level(2, at: 900) - sent) < 3)
    }

    @Test func aLegAloneHearsTheHoldMusicThenTheRoom() throws {
        var configuration = Self.configuration()
        var music = ToneGenerator(frequency: 440, amplitude: 0.2, sampleRate: 8_000)
        // Half a second, looped.
        configuration.holdMusic = WAVFile(sampleRate: 8_000, samples: music.next(count: 4_000))
        let h = try H(codecs: [.opus], tones: [700], configuration: configuration)
        try h.run(milliseconds: 2000)
        #expect(h.mixer.talkers == [0])
        #expect(abs(h.level(0, at: 440) - H.sentLevel(amplitude: 0.2)) < 3, "\(h.level(0, at: 440))")
        #expect(h.level(0, at: 700) < -60)
        #expect(h.encodes.suffix(50).allSatisfy { $0 == .init(hold: 1) })
        // A second participant arrives: the first hears the room (its tone) and no music.
        try h.addParticipant(codec: .pcmu, tone: 1100)
        try h.run(milliseconds: 1500)
        #expect(abs(h.level(0, at: 1100) - H.sentLevel()) < 3 && h.level(0, at: 440) < -50)
        #expect(abs(h.level(1, at: 700) - H.sentLevel()) < 3)
        // Without hold music a leg alone hears silence.
        let quiet = try H(codecs: [.opus], tones: [700], configuration: Self.configuration())
        try quiet.run(milliseconds: 1000)
        #expect(FrequencyAnalysis.rmsDBFS(samples: Array(quiet.participants[0].heard.suffix(24_000))) < -60)
    }

    @Test func talkingEventsFollowTheTalkers() throws {
        let h = try H(codecs: [.opus, .opus, .opus], tones: [500, nil, nil], configuration: Self.configuration())
        try h.run(milliseconds: 1000)
        #expect(h.mixer.takeEvents() == [.talkersChanged([0])])
        #expect(h.mixer.takeEvents().isEmpty)
        h.participants[1].tone = ToneGenerator(frequency: 900, amplitude: 0.3, sampleRate: 48_000)
        try h.run(milliseconds: 500)
        // Louder, so it leads.
        #expect(h.mixer.takeEvents() == [.talkersChanged([1, 0])])
        h.participants[0].tone = nil
        h.participants[1].tone = nil
        try h.run(milliseconds: 1000)
        let events = h.mixer.takeEvents()
        #expect(events.last == .talkersChanged([]), "\(events)")
        #expect(h.mixer.talkers.isEmpty)
        // A talker who leaves is reported at once.
        h.participants[2].tone = ToneGenerator(frequency: 700, amplitude: 0.2, sampleRate: 48_000)
        try h.run(milliseconds: 500)
        #expect(h.mixer.takeEvents() == [.talkersChanged([2])])
        _ = h.mixer.remove(2, now: h.now)
        #expect(h.mixer.takeEvents() == [.talkersChanged([])])
    }

    @Test func telephoneEventsAreReportedNotForwarded() throws {
        let h = try H(codecs: [.opus, .pcmu, .opus], tones: [500, nil, nil], configuration: Self.configuration())
        try h.run(milliseconds: 500)
        let phone = h.participants[1]
        var generator = TelephoneEventGenerator(clockRate: 8_000)
        let queued = generator.enqueueDigits([5])
        #expect(queued)
        for _ in 0..<20 {
            try h.run(milliseconds: 19)
            if let event = generator.tick(timestamp: phone.core.nextRTPTimestamp) {
                h.carry(phone.core.sendTelephoneEvent(event.event, eventTimestamp: event.timestamp, marker: event.marker, now: h.now), from: phone)
            }
            try h.run(milliseconds: 1)
        }
        let reported = h.topologyActions.compactMap { action -> (Int, TelephoneEvent)? in
            if case .receivedTelephoneEvent(let leg, let event, _) = action { (leg, event) } else { nil }
        }
        #expect(reported.count == 2 && reported.allSatisfy { $0.0 == 1 && $0.1.event == 5 }, "\(reported)")
        #expect(reported.last?.1.isEnd == true)
        #expect(h.mixer.counters.telephoneEventsReceived == 1)
        // Nobody else got an event packet: every packet they received is audio.
        for participant in [0, 2] {
            let types = Set(h.participants[participant].received.map(\.packet.payloadType))
            #expect(types.count == 1, "\(types)")
        }
    }

    @Test func listenersOfAnotherOpusComplexityGetAnEncodeOfTheirOwn() throws {
        let h = try H(codecs: [.opus, .opus, .opus], tones: [700, nil, nil], configuration: Self.configuration())
        try h.addParticipant(codec: .opus, tone: nil, opusComplexity: 4)
        try h.addParticipant(codec: .opus, tone: nil, opusComplexity: 4)
        try h.run(milliseconds: 1500)
        let nine = try #require(h.mixer.withLeg(1) { $0.encoderConfiguration } ?? nil)
        let four = try #require(h.mixer.withLeg(3) { $0.encoderConfiguration } ?? nil)
        #expect(nine.opus?.complexity == 9 && four.opus?.complexity == 4 && nine != four)
        // One talker and two configurations among the listeners: two shared encodes a tick.
        #expect(h.encodes.suffix(40).allSatisfy { $0 == .init(shared: 2, talker: 1) }, "\(h.encodes.suffix(3))")
        let payloads = (1..<5).map { Array(h.participants[$0].audioPayloads.suffix(30)) }
        #expect(payloads[0] == payloads[1] && payloads[2] == payloads[3])
        #expect(payloads[0] != payloads[2])
        #expect(h.mixer.counters.encodeFailures == 0)
    }

    @Test func aLateTickCatchesUpABoundedNumberOfTicks() throws {
        var configuration = Self.configuration()
        configuration.maximumCatchUpTicks = 5
        let h = try H(codecs: [.opus, .opus], tones: [500, nil], configuration: configuration)
        try h.run(milliseconds: 500)
        let ticks = h.mixer.counters.ticks
        #expect(h.mixer.counters.lateTicks == 0 && h.mixer.lateness.maximum < .milliseconds(1))
        // The loop stalls for 300 ms: 15 ticks are due, 5 run, 10 are given up.
        h.now = h.now + .milliseconds(300)
        let actions = h.mixer.handleTopologyTimeout(now: h.now)
        #expect(h.mixer.counters.ticks == ticks + 5)
        #expect(h.mixer.skippedTicks == 10)
        #expect(h.mixer.counters.lateTicks == 1)
        #expect(h.mixer.lateness.maximum >= .milliseconds(280))
        #expect(h.mixer.lateness.percentile(0.5) < .milliseconds(1))
        let sends = actions.filter { if case .send = $0 { true } else { false } }.count
        #expect(sends <= 5 * 2 + 2, "\(sends) datagrams in one catch-up")
        // The clock goes on from the new grid, on time.
        #expect(h.mixer.nextTopologyDeadline.map { $0 > h.now } == true)
        h.perform(actions)
        try h.run(milliseconds: 500)
        #expect(h.mixer.counters.lateTicks == 1 && h.mixer.skippedTicks == 10)
    }

    @Test func controlsRefuseUnknownLegsAndTheRoomIsBounded() throws {
        var configuration = Self.configuration()
        configuration.maximumParticipants = 2
        let h = try H(codecs: [.opus, .opus], tones: [nil, nil], configuration: configuration)
        #expect(throws: MediaTopologyError.self) { try h.mixer.setMuted(true, leg: 9) }
        #expect(throws: MediaTopologyError.self) { try h.mixer.setOnHold(true, leg: 9) }
        #expect(throws: MediaTopologyError.self) { try h.mixer.join(9) }
        #expect(throws: MediaTopologyError.self) { try h.addParticipant(codec: .opus, tone: nil) }
        #expect(h.mixer.isMuted(9) == nil)
        var bad = ConferenceMixer<Int>.Configuration()
        bad.mixer.sampleRate = 8_000
        #expect(throws: CodecError.self) { _ = try ConferenceMixer<Int>(configuration: bad) }
        // A leg removed leaves the room; the clock stops with the last one.
        try h.run(milliseconds: 200)
        _ = h.mixer.remove(0, now: h.now)
        #expect(h.mixer.joined == [1] && h.mixer.nextTopologyDeadline != nil)
        _ = h.mixer.remove(1, now: h.now)
        #expect(h.mixer.joined.isEmpty && h.mixer.nextTopologyDeadline == nil)
    }

    @Test func aLegSendsAnEncodedFrameThroughItsOwnPacketizer() throws {
        let h = try H(codecs: [.opus, .pcma], tones: [nil, nil], configuration: Self.configuration())
        try h.run(milliseconds: 100)
        let phone = h.participants[1]
        let configuration = phone.core.encoderConfiguration
        let key = try #require(configuration)
        #expect(key == AudioEncoderConfiguration(kind: .pcma) && key.clockRate == 8_000)
        let opus = h.participants[0].core.encoderConfiguration
        #expect(opus?.opus?.bitrate == 32_000)
        #expect(throws: MediaLegError.self) { _ = try phone.core.sendEncodedAudio(payload: [], now: h.now) }
        #expect(throws: MediaLegError.self) {
            _ = try phone.core.sendEncodedAudio(payload: [UInt8](repeating: 0xD5, count: MediaLegCore.maximumEncodedPayload + 1), now: h.now)
        }
        let before = phone.core.statistics.framesSent
        let next = phone.core.nextRTPTimestamp
        var tone = ToneGenerator(frequency: 700, amplitude: 0.2, sampleRate: 48_000)
        let payload = try key.makeCodec().encode(tone.next(count: 960))
        let actions = try phone.core.sendEncodedAudio(payload: payload, now: h.now)
        guard case .send(let bytes, _, let to)? = actions.first, actions.count == 1 else {
            Issue.record("\(actions)")
            return
        }
        let packet = try RTPPacket(parsing: bytes)
        #expect(to == phone.serverAddress && Array(packet.payload) == payload && packet.payloadType == 8)
        #expect(packet.timestamp == next && phone.core.nextRTPTimestamp == next &+ 160)
        #expect(phone.core.statistics.framesSent == before + 1)
    }
}
