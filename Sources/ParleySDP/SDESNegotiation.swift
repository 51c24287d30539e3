/// SDES offer/answer (RFC 4568) for the `RTP/SAVP` sections of a plain RTP endpoint, as
/// `AudioOfferAnswer` runs it: the answerer picks one offered `a=crypto` line and answers
/// with its tag and suite and a key of its own; each side then sends with its own key.
/// Sans-I/O: keys are cut from the bytes the caller brings (`LocalAudioCapabilities.sdesKeyMaterial`).
enum SDESNegotiation {
    /// How many reasons an error lists before it says how many more there were.
    private static let reasonsShown = 4

    /// The offered line we take: the first (in the offer's order, RFC 4568's preference)
    /// whose suite we run and whose key and session parameters we can use.
    /// - Returns: the line, or an error naming why none fits: `.noUsableCrypto` for an
    ///   SDES section without a line we can use, `.unsupportedProtocol` for DTLS-SRTP.
    static func choose(in section: MediaDescription, index: Int, of description: SessionDescription,
                       suites: [CryptoAttribute.Suite]) -> Result<CryptoAttribute, SDPError> {
        // RFC 8842/5763: a fingerprint means DTLS-SRTP keys the media, which needs a WebRTC endpoint.
        if section.hasAttribute(Fingerprint.attributeName) || description.hasAttribute(Fingerprint.attributeName) {
            return .failure(SDPError(.unsupportedProtocol, line: section.line, "m-section \(index) (audio) is \(section.proto) with a=fingerprint: DTLS-SRTP, which a plain RTP endpoint does not run"))
        }
        let lines = section.attributes(named: CryptoAttribute.attributeName)
        guard !lines.isEmpty else {
            return .failure(SDPError(.noUsableCrypto, line: section.line, "m-section \(index) (audio) is \(section.proto) but has no a=crypto line (RFC 4568), and SDES is the only SRTP keying a plain RTP endpoint runs"))
        }
        var reasons: [String] = []
        for line in lines {
            let place = line.line.map { "line \($0)" } ?? "a=crypto"
            let crypto: CryptoAttribute
            do {
                crypto = try line.parsed(as: CryptoAttribute.self)
            } catch {
                reasons.append("\(place): \(error.reason)")
                continue
            }
            guard suites.contains(crypto.suite) else {
                reasons.append("\(place): suite \(crypto.suite.name) is not one we run (\(suites.map(\.name).joined(separator: ", ")))")
                continue
            }
            if let reason = unusableReason(crypto) {
                reasons.append("\(place): \(reason)")
                continue
            }
            return .success(crypto)
        }
        var summary = reasons.prefix(reasonsShown).joined(separator: "; ")
        if reasons.count > reasonsShown { summary += "; and \(reasons.count - reasonsShown) more" }
        return .failure(SDPError(.noUsableCrypto, line: section.line, "m-section \(index) (audio) has no a=crypto line we can use: \(summary)"))
    }

    /// Why a well-formed line of a suite we run still cannot key our SRTP, or nil.
    static func unusableReason(_ crypto: CryptoAttribute) -> String? {
        guard crypto.suite.isKnown else { return "suite \(crypto.suite.name) is not one we know" }
        guard crypto.keys.count == 1 else {
            return "\(crypto.keys.count) keys, told apart by an MKI in every packet, which we do not send or read"
        }
        if let mki = crypto.keys[0].mki {
            return "the key has an MKI (\(mki.value):\(mki.length)) to be carried in every packet, which we do not send or read"
        }
        let unsupported = crypto.unsupportedSessionParameters
        guard unsupported.isEmpty else {
            return "session parameters we do not support: \(unsupported.joined(separator: " ")) (RFC 4568 §6.3)"
        }
        return nil
    }

    /// Our answer line to the `offered` one: the same tag and suite, our own key.
    static func answerLine(to offered: CryptoAttribute, key: [UInt8]) -> CryptoAttribute {
        CryptoAttribute(tag: offered.tag, suite: offered.suite, keys: [.init(keySalt: key)])
    }

    /// Our offer's lines: one per suite, tags from 1, each with its own key cut from
    /// `keyMaterial` in order (the caller checked there is enough).
    static func offerLines(suites: [CryptoAttribute.Suite], keyMaterial: [UInt8]) -> [CryptoAttribute] {
        var lines: [CryptoAttribute] = []
        var offset = 0
        for (index, suite) in suites.enumerated() {
            let length = suite.keySaltLength ?? 0
            let key = Array(keyMaterial[offset..<min(offset + length, keyMaterial.count)])
            offset += length
            lines.append(CryptoAttribute(tag: UInt32(index + 1), suite: suite, keys: [.init(keySalt: key)]))
        }
        return lines
    }

    /// Key bytes an offer of `suites` takes.
    static func offerKeyMaterialLength(_ suites: [CryptoAttribute.Suite]) -> Int {
        suites.reduce(0) { $0 + ($1.keySaltLength ?? 0) }
    }

    /// What the answer to our SDES offer agreed: exactly one `a=crypto` line (RFC 4568
    /// answers accept one), naming an offered tag with the offered suite, with a key we
    /// can use. Our key is the one our offer gave that tag.
    /// - Throws: `SDPError` `.invalidAnswer`, or `.malformedAttribute` for a broken line.
    static func accept(_ answered: MediaDescription, to offered: MediaDescription, index: Int) throws(SDPError) -> NegotiatedSDES {
        let lines = answered.attributes(named: CryptoAttribute.attributeName)
        guard lines.count == 1 else {
            throw SDPError(.invalidAnswer, line: answered.line, "m-section \(index) of the answer has \(lines.count) a=crypto lines; an SDES answer has one, naming the offered line it takes (RFC 4568)")
        }
        let chosen = try lines[0].parsed(as: CryptoAttribute.self)
        let ours = offered.attributes(named: CryptoAttribute.attributeName).compactMap { try? $0.parsed(as: CryptoAttribute.self) }
        guard let mine = ours.first(where: { $0.tag == chosen.tag }), let localKey = mine.keys.first?.keySalt else {
            throw SDPError(.invalidAnswer, line: lines[0].line, "the answer's a=crypto tag \(chosen.tag) names no line of our offer (tags \(ours.map { String($0.tag) }.joined(separator: ", ")))")
        }
        guard mine.suite == chosen.suite else {
            throw SDPError(.invalidAnswer, line: lines[0].line, "the answer's a=crypto tag \(chosen.tag) says \(chosen.suite.name); our offer gave that tag \(mine.suite.name)")
        }
        if let reason = unusableReason(chosen) {
            throw SDPError(.invalidAnswer, line: lines[0].line, "the answer's a=crypto line is unusable: \(reason)")
        }
        return NegotiatedSDES(tag: chosen.tag, suite: chosen.suite, localKeyMaterial: localKey, remoteKeyMaterial: chosen.keys[0].keySalt)
    }
}
