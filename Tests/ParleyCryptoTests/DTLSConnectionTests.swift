import Testing
import ParleyCrypto
import ParleyTestSupport

@Suite struct DTLSConnectionTests {
    private func expectMatchingKeys(_ pair: DTLSPair, profile: SRTPProtectionProfile, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(pair.bothConnected, sourceLocation: sourceLocation)
        let clientKeys = try #require(DTLSPair.keys(pair.clientEvents), sourceLocation: sourceLocation)
        let serverKeys = try #require(DTLSPair.keys(pair.serverEvents), sourceLocation: sourceLocation)
        #expect(clientKeys.profile == profile, sourceLocation: sourceLocation)
        #expect(serverKeys.profile == profile, sourceLocation: sourceLocation)
        #expect(clientKeys.clientMasterKey == serverKeys.clientMasterKey, sourceLocation: sourceLocation)
        #expect(clientKeys.serverMasterKey == serverKeys.serverMasterKey, sourceLocation: sourceLocation)
        #expect(clientKeys.clientMasterSalt == serverKeys.clientMasterSalt, sourceLocation: sourceLocation)
        #expect(clientKeys.serverMasterSalt == serverKeys.serverMasterSalt, sourceLocation: sourceLocation)
        #expect(clientKeys.localKeyAndSalt == serverKeys.remoteKeyAndSalt, sourceLocation: sourceLocation)
        #expect(clientKeys.remoteKeyAndSalt == serverKeys.localKeyAndSalt, sourceLocation: sourceLocation)
        #expect(clientKeys.localKeyAndSalt != clientKeys.remoteKeyAndSalt, sourceLocation: sourceLocation)
        #expect(clientKeys.localKeyAndSalt.count == profile.keyLength + profile.saltLength, sourceLocation: sourceLocation)
        #expect(pair.client.keyingMaterial == clientKeys && pair.server.keyingMaterial == serverKeys, sourceLocation: sourceLocation)
    }

    // MARK: Handshake

    @Test func handshakeAliceClientBobServer() throws {
        let pair = try DTLSPair.make()
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        #expect(pair.client.peerFingerprint == TestCertificates.bob.fingerprint)
        #expect(pair.server.peerFingerprint == TestCertificates.alice.fingerprint)
        #expect(pair.client.retransmissions == 0 && pair.server.retransmissions == 0)
        #expect(pair.now == pair.start, "no timer should have fired without loss")
        #expect(pair.client.nextDeadline == nil && pair.server.nextDeadline == nil)
        #expect(pair.client.callerDrivenTimer)
    }

    @Test func handshakeBobClientAliceServer() throws {
        let pair = try DTLSPair.make(swapped: true)
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        #expect(pair.client.peerFingerprint == TestCertificates.alice.fingerprint)
    }

    @Test func everyDatagramFitsTheMTU() throws {
        let pair = try DTLSPair.make { c, s in c.mtu = 300; s.mtu = 300 }
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        let all = pair.sentByClient.map(\.bytes) + pair.sentByServer.map(\.bytes)
        #expect(all.allSatisfy { $0.count <= 300 })
        #expect(pair.sentByServer.count > 2, "the server's certificate flight must be split")
    }

    // RFC 5764 §4.1.2: the server picks from the client's list; force each profile by
    // giving one side a single entry.
    @Test func rfc5764ForcedAESCMProfileExports60Bytes() throws {
        let pair = try DTLSPair.make { _, s in s.srtpProfiles = [.aes128CMHMACSHA1_80] }
        pair.run()
        try expectMatchingKeys(pair, profile: .aes128CMHMACSHA1_80)
        let keys = try #require(pair.client.keyingMaterial)
        #expect(keys.clientMasterKey.count == 16 && keys.clientMasterSalt.count == 14)
        #expect(SRTPKeyingMaterial.exportLength(for: .aes128CMHMACSHA1_80) == 60)
    }

    @Test func rfc5764ForcedGCMProfileExports56Bytes() throws {
        let pair = try DTLSPair.make { c, _ in c.srtpProfiles = [.aeadAES128GCM] }
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        let keys = try #require(pair.server.keyingMaterial)
        #expect(keys.serverMasterKey.count == 16 && keys.serverMasterSalt.count == 12)
        #expect(SRTPKeyingMaterial.exportLength(for: .aeadAES128GCM) == 56)
    }

    // OpenSSL's server picks by its own order among the profiles the client offered.
    @Test func serverPreferenceWinsWhenBothOfferBoth() throws {
        let pair = try DTLSPair.make { c, s in
            c.srtpProfiles = [.aeadAES128GCM, .aes128CMHMACSHA1_80]
            s.srtpProfiles = [.aes128CMHMACSHA1_80, .aeadAES128GCM]
        }
        pair.run()
        try expectMatchingKeys(pair, profile: .aes128CMHMACSHA1_80)
    }

    @Test func peerWithoutUseSRTPFailsClearly() throws {
        let pair = try DTLSPair.make { c, _ in c.srtpProfiles = [] }
        pair.run()
        let serverError = try #require(DTLSPair.failure(pair.serverEvents))
        #expect(serverError.kind == .srtpNotNegotiated)
        #expect(serverError.description.contains("peer did not negotiate use_srtp"))
        let clientError = try #require(DTLSPair.failure(pair.clientEvents))
        #expect(clientError.kind == .srtpNotNegotiated)
        #expect(DTLSPair.keys(pair.clientEvents) == nil && DTLSPair.keys(pair.serverEvents) == nil)
    }

    // MARK: Fingerprints (RFC 5763 §5)

    @Test func clientRejectsServerWithWrongFingerprint() throws {
        let pair = try DTLSPair.make { c, _ in c.expectedPeerFingerprint = TestCertificates.mallory.fingerprint }
        pair.run()
        let error = try #require(DTLSPair.failure(pair.clientEvents))
        #expect(error.kind == .fingerprintMismatch)
        #expect(error.description.contains(TestCertificates.bob.fingerprint.abbreviated))
        #expect(error.description.contains(TestCertificates.mallory.fingerprint.abbreviated))
        #expect(pair.client.state == .failed(error))
        #expect(DTLSPair.keys(pair.clientEvents) == nil)
        // The server finished its side, then hears close_notify.
        #expect(pair.server.state == .closed)
        #expect(pair.serverEvents.contains(.closed))
    }

    @Test func serverRejectsClientWithWrongFingerprint() throws {
        let pair = try DTLSPair.make { _, s in s.expectedPeerFingerprint = TestCertificates.mallory.fingerprint }
        pair.run()
        let error = try #require(DTLSPair.failure(pair.serverEvents))
        #expect(error.kind == .fingerprintMismatch)
        #expect(error.description.contains(TestCertificates.alice.fingerprint.abbreviated))
        #expect(pair.client.state != .connected || pair.clientEvents.contains(.closed))
    }

    // MARK: Loss and caller-driven retransmission (RFC 6347 §4.2.4)

    /// Flights of a full handshake: 1 ClientHello (client datagram 0), 2 ServerHello…Done
    /// (server 0), 3 Certificate…Finished (client 1), 4 ChangeCipherSpec, Finished (server 1).
    @Test(arguments: [(true, 0), (false, 0), (true, 1), (false, 1)])
    func lossOfEachFlightIsRecovered(fromClient: Bool, index: Int) throws {
        let pair = try DTLSPair.make()
        var dropped = false
        pair.wire = { from, i, bytes in
            if from == fromClient, i == index, !dropped { dropped = true; return [] }
            return [bytes]
        }
        pair.run()
        #expect(dropped)
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        #expect(pair.client.retransmissions + pair.server.retransmissions >= 1)
        #expect(pair.now - pair.start >= .seconds(1), "recovery waits for the 1 s caller-clock timer")
        #expect(pair.now - pair.start < .seconds(3))
    }

    @Test func lossOfFinalFlightMakesServerResendOnRepeatedFinished() throws {
        let pair = try DTLSPair.make()
        pair.wire = { from, i, bytes in (!from && i == 1) ? [] : [bytes] }
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        #expect(pair.client.retransmissions == 1)
        #expect(pair.server.retransmissions == 0, "the server answers the client's retransmission, it has no timer")
        #expect(pair.sentByServer.count >= 3)
    }

    @Test func backoffDoublesUpToTheCapThenGivesUp() throws {
        let pair = try DTLSPair.make { c, s in
            c.initialRetransmitTimeout = .seconds(1)
            c.maximumRetransmitTimeout = .seconds(4)
            c.handshakeTimeout = .seconds(20)
            s.handshakeTimeout = .seconds(20)
        }
        pair.wire = { from, _, bytes in from ? [] : [bytes] }  // the server never hears anything
        pair.run()
        let sendTimes = pair.sentByClient.map(\.at)
        #expect(sendTimes == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(11), .seconds(15), .seconds(19)])
        let error = try #require(DTLSPair.failure(pair.clientEvents))
        #expect(error.kind == .handshakeTimeout)
        #expect(error.description.contains("6 retransmissions"))
        #expect(pair.now - pair.start == .seconds(20))
        #expect(pair.client.nextDeadline == nil)
        // The server never saw a ClientHello; it gives up at its own total.
        #expect(DTLSPair.failure(pair.serverEvents)?.kind == .handshakeTimeout)
    }

    @Test func defaultTimersFollowRFC6347() throws {
        let pair = try DTLSPair.make()
        pair.wire = { _, _, _ in [] }
        pair.run()
        let sendTimes = pair.sentByClient.map(\.at)
        #expect(sendTimes == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
        #expect(DTLSPair.failure(pair.clientEvents)?.kind == .handshakeTimeout)
        #expect(pair.now - pair.start == .seconds(30))
    }

    @Test func nothingHappensBeforeTheDeadline() throws {
        let pair = try DTLSPair.make()
        let sent = pair.client.start(now: pair.start)
        #expect(sent.count == 1)
        #expect(pair.client.nextDeadline == pair.start + .seconds(1))
        #expect(pair.client.handleTimeout(now: pair.start + .milliseconds(999)).isEmpty)
        #expect(pair.client.retransmissions == 0)
        let again = pair.client.handleTimeout(now: pair.start + .seconds(1))
        #expect(again.count == 1)
        #expect(pair.client.retransmissions == 1)
        #expect(pair.client.nextDeadline == pair.start + .seconds(3))
    }

    // MARK: Hostile and odd input

    @Test func garbageTruncatedAndDuplicatedDatagramsDoNotBreakTheHandshake() throws {
        let pair = try DTLSPair.make()
        pair.wire = { _, _, bytes in
            [
                [],                                      // empty
                [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42],  // STUN-like first byte
                [0x80, 0x60, 0x00, 0x01],                // RTP-like first byte
                [22, 0xFE, 0xFD, 0x00],                  // shorter than a record header
                Array(bytes.prefix(bytes.count / 2)),    // truncated record
                bytes,
                bytes,                                   // duplicate
            ]
        }
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        #expect(pair.server.droppedDatagrams[.notDTLS, default: 0] >= 2)
        #expect(pair.server.droppedDatagrams[.empty] != nil)
        #expect(pair.client.droppedDatagrams[.shortRecordHeader] != nil)
    }

    @Test func replayedRecordsAfterTheHandshakeAreIgnored() throws {
        let pair = try DTLSPair.make()
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        for (_, bytes) in pair.sentByClient { pair.inject(bytes, toServer: true) }
        for (_, bytes) in pair.sentByServer { pair.inject(bytes, toServer: false) }
        pair.run()
        #expect(pair.bothConnected)
        #expect(DTLSPair.failure(pair.clientEvents + pair.serverEvents) == nil)
    }

    @Test func randomDatagramsNeverTrap() throws {
        var generator = SeededGenerator(seed: 0xD715)
        let pair = try DTLSPair.make()
        pair.run()
        for _ in 0..<2000 {
            var bytes = generator.bytes(generator.below(200))
            if !bytes.isEmpty, generator.below(2) == 0 { bytes[0] = UInt8(20 + generator.below(44)) }
            if bytes.count > 2, generator.below(2) == 0 { bytes[1] = 0xFE; bytes[2] = 0xFD }
            _ = pair.client.receive(datagram: bytes, now: pair.now)
            _ = pair.server.receive(datagram: bytes, now: pair.now)
        }
        // Random records fail authentication and are discarded (RFC 6347 §4.1.2.7).
        #expect(pair.bothConnected)
    }

    @Test func randomDatagramsDuringTheHandshakeNeverTrap() throws {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<20 {
            let pair = try DTLSPair.make()
            pair.wire = { _, _, bytes in
                var junk = generator.bytes(13 + generator.below(100))
                junk[0] = 22
                junk[1] = 0xFE
                junk[2] = 0xFD
                return round % 2 == 0 ? [junk, bytes] : [bytes, junk]
            }
            pair.run()
            // Epoch-0 records are not authenticated, so junk may legitimately end a
            // handshake; what matters is a definite end state and no trap.
            for connection in [pair.client, pair.server] {
                switch connection.state {
                case .connected, .failed, .closed: break
                case .new, .handshaking: Issue.record("round \(round) left a connection in \(connection.state)")
                }
            }
        }
    }

    // MARK: Close, application data, misuse

    @Test func closeNotifyClosesThePeer() throws {
        let pair = try DTLSPair.make()
        pair.run()
        try expectMatchingKeys(pair, profile: .aeadAES128GCM)
        for action in pair.client.close() {
            if case .send(let bytes) = action { pair.inject(bytes, toServer: true) }
        }
        pair.run()
        #expect(pair.client.state == .closed)
        #expect(pair.server.state == .closed)
        #expect(pair.serverEvents.last == .closed)
        #expect(pair.server.receive(datagram: [23, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 20), now: pair.now).isEmpty)
        #expect(pair.server.droppedDatagrams[.afterClose] == 1)
    }

    @Test func applicationDataArrives() throws {
        let pair = try DTLSPair.make()
        pair.run()
        for action in pair.client.send(applicationData: Array("hello".utf8)) {
            if case .send(let bytes) = action { pair.inject(bytes, toServer: true) }
        }
        pair.run()
        #expect(pair.serverEvents.contains(.received(Array("hello".utf8))))
    }

    @Test func misuseIsReportedNotTrapped() throws {
        let pair = try DTLSPair.make()
        #expect(pair.server.receive(datagram: [22, 0xFE, 0xFF], now: pair.now).isEmpty)
        #expect(pair.server.droppedDatagrams[.notStarted] == 1)
        #expect(pair.server.handleTimeout(now: pair.now).isEmpty)
        guard case .failed(let error) = pair.client.send(applicationData: [1]).first else {
            Issue.record("send before connect must fail")
            return
        }
        #expect(error.kind == .invalidState)
        _ = pair.client.start(now: pair.now)
        guard case .failed(let again) = pair.client.start(now: pair.now).first else {
            Issue.record("second start must fail")
            return
        }
        #expect(again.kind == .invalidState)
        #expect(pair.client.state == .handshaking)
    }
}
