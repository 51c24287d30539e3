import ParleySDP
import Testing

/// SDES offer/answer (RFC 4568 over RFC 3264) for a plain RTP endpoint: `RTP/SAVP` sections
/// keyed by `a=crypto` lines, each side sending with the key it wrote.
@Suite("SDES offer/answer (RFC 4568, RTP/SAVP)")
struct SDESOfferAnswerTests {
    /// Key material as the caller would draw it (here a fixed pattern, so a failure repeats).
    static func material(_ count: Int, _ seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed } }

    static func plain(_ address: String = "192.0.2.10", port: UInt16 = 30_000, offersSDES: Bool = false, seed: UInt8 = 0xA5) -> LocalAudioCapabilities {
        var local = PlainRTPOfferAnswerTests.plain(address, port: port)
        local.offersSDES = offersSDES
        local.sdesKeyMaterial = material(200, seed)
        return local
    }

    static let key80 = CryptoAttribute.KeyParameter(keySalt: material(30, 0x11)).text
    static let key32 = CryptoAttribute.KeyParameter(keySalt: material(30, 0x22)).text
    static let keyGCM = CryptoAttribute.KeyParameter(keySalt: material(28, 0x33)).text

    /// A SIP phone's SDES offer: `RTP/SAVP`, `crypto` lines in its order of preference.
    static func offer(proto: String = "RTP/SAVP", _ cryptoLines: [String], extra: String = "") -> String {
        var text = """
            v=0\r
            o=phone 1 1 IN IP4 198.51.100.7\r
            s=call\r
            c=IN IP4 198.51.100.7\r
            t=0 0\r
            m=audio 5004 \(proto) 0 8 101\r
            a=rtpmap:101 telephone-event/8000\r
            a=fmtp:101 0-16\r
            a=sendrecv\r

            """
        text += extra
        for line in cryptoLines { text += "a=crypto:\(line)\r\n" }
        return text
    }

    static func answer(_ offerText: String, local: LocalAudioCapabilities = plain()) throws -> AudioAnswer {
        try AudioOfferAnswer(local: local).answer(to: SessionDescription(parsing: offerText))
    }

    @Test("the first offered line we can use is answered with its tag and suite and our own key")
    func answersTheFirstUsableLine() throws {
        let offerText = Self.offer([
            "1 AES_256_CM_HMAC_SHA1_80 \(CryptoAttribute.KeyParameter(keySalt: Self.material(46, 1)).text)",
            "2 AES_CM_128_HMAC_SHA1_80 \(Self.key80) UNENCRYPTED_SRTP",
            "3 AES_CM_128_HMAC_SHA1_32 \(Self.key32)|2^31",
            "4 AES_CM_128_HMAC_SHA1_80 \(Self.key80)",
        ])
        let local = Self.plain()
        let answer = try Self.answer(offerText, local: local)
        let section = answer.description.media[0]
        #expect(section.proto == "RTP/SAVP")
        #expect(section.port == 30_000)
        let lines = try section.values(CryptoAttribute.self)
        #expect(lines.count == 1)
        let ours = try #require(lines.first)
        // Tag 3: tag 1's suite is not one we run, tag 2 wants unencrypted SRTP.
        #expect(ours.tag == 3 && ours.suite == .aesCM128HMACSHA1_32)
        #expect(ours.keys == [.init(keySalt: Array(local.sdesKeyMaterial.prefix(30)))])
        #expect(ours.sessionParameters.isEmpty)
        let sdes = try #require(answer.audio.first?.sdes)
        #expect(sdes.tag == 3 && sdes.suite == .aesCM128HMACSHA1_32)
        #expect(sdes.localKeyMaterial == Array(local.sdesKeyMaterial.prefix(30)))
        #expect(sdes.remoteKeyMaterial == Self.material(30, 0x22))
        #expect(try SessionDescription(parsing: answer.description.serialized()) == answer.description)
    }

    @Test("AEAD_AES_128_GCM (RFC 7714 §14.1) is answered with a 28-byte key, and RTP/SAVPF without a fingerprint is SDES too")
    func answersGCMOverSAVPF() throws {
        let answer = try Self.answer(Self.offer(proto: "RTP/SAVPF", ["7 AEAD_AES_128_GCM \(Self.keyGCM)"]))
        #expect(answer.description.media[0].proto == "RTP/SAVPF")
        let sdes = try #require(answer.audio.first?.sdes)
        #expect(sdes.tag == 7 && sdes.suite == .aeadAES128GCM)
        #expect(sdes.localKeyMaterial.count == 28 && sdes.remoteKeyMaterial == Self.material(28, 0x33))
    }

    @Test("a plain RTP/AVP offer still gets a plain answer, with no keys")
    func plainStaysPlain() throws {
        let answer = try Self.answer(PlainRTPOfferAnswerTests.sipOffer)
        let section = answer.description.media[0]
        #expect(section.proto == "RTP/AVP")
        #expect(!section.hasAttribute("crypto"))
        #expect(answer.audio.first?.sdes == nil)
    }

    @Test("RFC 4568 §8.1's offer is refused: both lines carry an MKI in every packet, which we do not handle")
    func rfcOfferNeedsMKI() throws {
        let offerText = Self.offer([CryptoAttributeTests.rfcOfferLine1, CryptoAttributeTests.rfcOfferLine2])
        #expect {
            _ = try Self.answer(offerText)
        } throws: { error in
            guard let error = error as? SDPError, error.kind == .noUsableCrypto else { return false }
            return error.line == 6 && error.reason.contains("line 10: the key has an MKI (1:4)")
                && error.reason.contains("line 11: suite F8_128_HMAC_SHA1_80 is not one we run")
        }
    }

    @Test("RTP/SAVP offers with no usable a=crypto line are refused, saying why", arguments: [
        ([], "has no a=crypto line"),
        (["1 AES_CM_128_HMAC_SHA1_80 inline:AAAA"], "30-byte key||salt"),
        (["1 AES_CM_128_HMAC_SHA1_80 \(SDESOfferAnswerTests.key80) UNAUTHENTICATED_SRTP KDR=3"], "session parameters we do not support: UNAUTHENTICATED_SRTP KDR=3"),
        (["1 AES_CM_128_HMAC_SHA1_80 \(SDESOfferAnswerTests.key80) FEC_KEY=\(SDESOfferAnswerTests.key32)"], "FEC_KEY"),
        (["1 AES_CM_128_HMAC_SHA1_80 \(SDESOfferAnswerTests.key80);\(SDESOfferAnswerTests.key80)"], "2 keys"),
        (["F8_128_HMAC_SHA1_80", "NULL_HMAC_SHA1_80", "F8_128_HMAC_SHA1_32", "AES_192_CM_HMAC_SHA1_80", "AES_256_CM_HMAC_SHA1_32"]
            .enumerated().map { "\($0.offset + 1) \($0.element) \(SDESOfferAnswerTests.key80)" }, "and 1 more"),
    ])
    func refusesUnusableCrypto(lines: [String], reason: String) throws {
        #expect {
            _ = try Self.answer(Self.offer(lines))
        } throws: { error in
            guard let error = error as? SDPError, error.kind == .noUsableCrypto else { return false }
            return error.reason.contains(reason)
        }
    }

    @Test("an RTP/SAVP section with a fingerprint is DTLS-SRTP: a plain RTP endpoint refuses it")
    func fingerprintMeansDTLS() throws {
        let offerText = Self.offer(["1 AES_CM_128_HMAC_SHA1_80 \(Self.key80)"], extra: "a=fingerprint:sha-256 00:11:22:33\r\n")
        #expect {
            _ = try Self.answer(offerText)
        } throws: { error in
            (error as? SDPError)?.kind == .unsupportedProtocol && "\(error)".contains("DTLS-SRTP")
        }
    }

    @Test("a WebRTC endpoint does not answer SDES")
    func webRTCEndpointRefusesSDES() throws {
        let offerText = Self.offer(["1 AES_CM_128_HMAC_SHA1_80 \(Self.key80)"])
        #expect {
            _ = try AudioOfferAnswer(local: serverCapabilities()).answer(to: SessionDescription(parsing: offerText))
        } throws: { error in
            (error as? SDPError)?.kind == .unsupportedProtocol
        }
    }

    @Test("an SDES section next to a plain one: the SDES one alone takes a key")
    func onlySDESSectionsTakeKeys() throws {
        var offerText = Self.offer(["1 AES_CM_128_HMAC_SHA1_80 \(Self.key80)"])
        offerText += "m=audio 5006 RTP/AVP 0\r\na=sendrecv\r\n"
        let local = Self.plain()
        let negotiator = AudioOfferAnswer(local: local)
        let offer = try SessionDescription(parsing: offerText)
        #expect(negotiator.sdesKeyMaterialLength(toAnswer: offer) == 30)
        let answer = try negotiator.answer(to: offer)
        #expect(answer.audio.map { $0.sdes != nil } == [true, false])
        #expect(answer.description.media.map(\.proto) == ["RTP/SAVP", "RTP/AVP"])
    }

    @Test("answering needs enough key material, and never reuses a key across sections")
    func keyMaterialIsCheckedAndNotReused() throws {
        var offerText = Self.offer(["1 AES_CM_128_HMAC_SHA1_80 \(Self.key80)"])
        offerText += "m=audio 5006 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 \(Self.key32)\r\n"
        var local = Self.plain()
        let answer = try Self.answer(offerText, local: local)
        let keys = answer.audio.compactMap { $0.sdes?.localKeyMaterial }
        #expect(keys == [Array(local.sdesKeyMaterial[0..<30]), Array(local.sdesKeyMaterial[30..<60])])
        local.sdesKeyMaterial = Array(local.sdesKeyMaterial.prefix(45))
        #expect {
            _ = try Self.answer(offerText, local: local)
        } throws: { error in
            (error as? SDPError)?.kind == .invalidCapabilities && "\(error)".contains("key material runs out")
        }
    }

    // MARK: Offering SDES

    @Test("our SDES offer: RTP/SAVP, AES_CM_128_HMAC_SHA1_80 then _32 (then GCM), a key each; the answer's tag decides")
    func offersAndAccepts() throws {
        let ours = AudioOfferAnswer(local: Self.plain(offersSDES: true))
        #expect(ours.sdesKeyMaterialLengthForOffer == 30 + 30 + 28)
        let offer = try ours.makeOffer()
        let section = offer.media[0]
        #expect(section.proto == "RTP/SAVP")
        let offered = try section.values(CryptoAttribute.self)
        #expect(offered.map(\.tag) == [1, 2, 3])
        #expect(offered.map(\.suite) == [.aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32, .aeadAES128GCM])
        let offeredKeys = offered.map { $0.keys[0].keySalt }
        #expect(offeredKeys == [Array(ours.local.sdesKeyMaterial[0..<30]), Array(ours.local.sdesKeyMaterial[30..<60]), Array(ours.local.sdesKeyMaterial[60..<88])])

        // The peer runs only _32, so it takes tag 2.
        var peer = Self.plain("198.51.100.7", port: 5004, seed: 0x5A)
        peer.sdesSuites = [.aesCM128HMACSHA1_32]
        let answer = try AudioOfferAnswer(local: peer).answer(to: SessionDescription(parsing: offer.serialized()))
        let theirs = try #require(answer.audio.first?.sdes)
        #expect(theirs.tag == 2)
        let agreed = try #require(try ours.acceptAnswer(answer.description, to: offer).first?.sdes)
        #expect(agreed.tag == 2 && agreed.suite == .aesCM128HMACSHA1_32)
        // Each side sends with its own key and receives with the other's.
        #expect(agreed.localKeyMaterial == offeredKeys[1])
        #expect(agreed.localKeyMaterial == theirs.remoteKeyMaterial)
        #expect(agreed.remoteKeyMaterial == theirs.localKeyMaterial)
        #expect(agreed.localKeyMaterial != agreed.remoteKeyMaterial)
    }

    @Test("offering SDES is off by default, needs a plain RTP endpoint and enough key material")
    func offerNeedsItsSettings() throws {
        #expect(!LocalAudioCapabilities(iceUsernameFragment: "", icePassword: "", fingerprint: .init(algorithm: "sha-256", bytes: []), sessionID: 1).offersSDES)
        #expect(try AudioOfferAnswer(local: Self.plain()).makeOffer().media[0].proto == "RTP/AVP")
        var webRTC = serverCapabilities()
        webRTC.offersSDES = true
        let webRTCOffer = try AudioOfferAnswer(local: webRTC).makeOffer()
        #expect(webRTCOffer.media[0].proto == "UDP/TLS/RTP/SAVPF" && !webRTCOffer.media[0].hasAttribute("crypto"))
        var short = Self.plain(offersSDES: true)
        short.sdesKeyMaterial = Array(short.sdesKeyMaterial.prefix(87))
        #expect { _ = try AudioOfferAnswer(local: short).makeOffer() } throws: { ($0 as? SDPError)?.kind == .invalidCapabilities }
        var unknown = Self.plain(offersSDES: true)
        unknown.sdesSuites = [CryptoAttribute.Suite("F8_128_HMAC_SHA1_80")]
        #expect { _ = try AudioOfferAnswer(local: unknown).makeOffer() } throws: { ($0 as? SDPError)?.kind == .invalidCapabilities }
    }

    /// Answers to our SDES offer that do not fit it, each refused with `.invalidAnswer`.
    @Test("invalid answers to an SDES offer are refused", arguments: [
        ("a=crypto:9 AES_CM_128_HMAC_SHA1_80", "names no line of our offer"),
        ("a=crypto:1 AES_CM_128_HMAC_SHA1_32", "our offer gave that tag AES_CM_128_HMAC_SHA1_80"),
        ("two lines", "2 a=crypto lines"),
        ("no line", "0 a=crypto lines"),
        ("RTP/AVP", "RTP/AVP in the answer but RTP/SAVP in the offer"),
        ("mki", "unusable"),
    ])
    func refusesBadAnswers(change: String, reason: String) throws {
        let ours = AudioOfferAnswer(local: Self.plain(offersSDES: true))
        let offer = try ours.makeOffer()
        var text = try AudioOfferAnswer(local: Self.plain("198.51.100.7", port: 5004, seed: 0x5A))
            .answer(to: SessionDescription(parsing: offer.serialized())).description.serialized()
        let line = try #require(text.split(separator: "\r\n").first { $0.hasPrefix("a=crypto:1 ") })
        switch change {
        case "two lines": text = text.replacing( line + "\r\n", with: line + "\r\n" + line + "\r\n")
        case "no line": text = text.replacing( line + "\r\n", with: "")
        case "RTP/AVP": text = text.replacing( "RTP/SAVP", with: "RTP/AVP")
        case "mki": text = text.replacing( String(line), with: line + "|1:4")
        default: text = text.replacing( "a=crypto:1 AES_CM_128_HMAC_SHA1_80", with: change)
        }
        #expect {
            _ = try ours.acceptAnswer(SessionDescription(parsing: text), to: offer)
        } throws: { error in
            (error as? SDPError)?.kind == .invalidAnswer && "\(error)".contains(reason)
        }
    }
}
