/// Audio offer/answer (RFC 3264) for WebRTC-style call legs: ICE (RFC 8839), DTLS-SRTP
/// (RFC 8842, RFC 5763), rtcp-mux (RFC 5761) and BUNDLE (RFC 8843).
///
/// Sans-I/O: give it descriptions and our capabilities, get back descriptions and
/// `NegotiatedAudio` values.
///
/// ```
/// let negotiator = AudioOfferAnswer(local: capabilities)
/// let answer = try negotiator.answer(to: SessionDescription(parsing: offerText))
/// send(answer.description.serialized()); start(answer.audio[0])
/// ```
public struct AudioOfferAnswer: Sendable {
    /// Our side.
    public var local: LocalAudioCapabilities

    /// RTP profiles we carry audio over: DTLS-SRTP over ICE/UDP (RFC 5764 §8).
    public static let supportedProtocols: Set<String> = ["UDP/TLS/RTP/SAVPF", "UDP/TLS/RTP/SAVP"]
    /// RTP profiles a plain RTP endpoint (`LocalAudioCapabilities.Transport.plainRTP`)
    /// carries audio over: the RTP/AVP profile (RFC 3551), and the secure ones keyed by SDES.
    public static let plainRTPProtocols: Set<String> = ["RTP/AVP", "RTP/SAVP", "RTP/SAVPF"]
    /// The secure profiles (RFC 3711 `RTP/SAVP`, RFC 5124 `RTP/SAVPF`) a plain RTP endpoint
    /// keys with SDES (RFC 4568 `a=crypto`). With an `a=fingerprint` they mean DTLS-SRTP,
    /// which a plain RTP endpoint refuses.
    public static let sdesProtocols: Set<String> = ["RTP/SAVP", "RTP/SAVPF"]

    public init(local: LocalAudioCapabilities) {
        self.local = local
    }

    // MARK: Answering an offer

    /// Builds the answer to `offer` (RFC 3264 §6): each `m=audio` we can serve is
    /// accepted with the common codecs in our order of preference (the offerer's
    /// payload type numbers kept); everything else (video, data channels, audio with
    /// no common codec or an unknown transport) is rejected with port 0 and leaves the
    /// BUNDLE group (RFC 8843 §7.3.3).
    ///
    /// A plain RTP endpoint answers an `RTP/SAVP` section with SDES (RFC 4568): the first
    /// offered `a=crypto` line we can use, echoed with its tag and suite and a key cut from
    /// `local.sdesKeyMaterial`; `NegotiatedAudio.sdes` holds both keys.
    ///
    /// - Throws: `SDPError` `.noAudioMedia`, `.noCommonCodec`, `.unsupportedProtocol` or
    ///   `.noUsableCrypto` when no audio section is usable;
    ///   `.missingICECredentials` / `.missingFingerprint` when a usable one lacks them;
    ///   `.malformedAttribute` for a broken attribute we rely on;
    ///   `.invalidCapabilities` for unusable local settings (too little SDES key material).
    public func answer(to offer: SessionDescription) throws(SDPError) -> AudioAnswer {
        try local.validate()
        let offerBundle = try offer.bundleGroup()
        var answerSections: [MediaDescription] = []
        var accepted: [(index: Int, selection: CodecSelection)] = []
        var firstAudioProblem: SDPError? = nil

        for (index, section) in offer.media.enumerated() {
            switch try decide(section, index: index, bundle: offerBundle, in: offer) {
            case .accept(let selection):
                accepted.append((index, selection))
                answerSections.append(section)  // placeholder, replaced below
            case .reject(let problem):
                if firstAudioProblem == nil { firstAudioProblem = problem }
                answerSections.append(rejected(section))
            }
        }
        guard !accepted.isEmpty else {
            if let firstAudioProblem { throw firstAudioProblem }
            throw SDPError(.noAudioMedia, line: nil, "the offer has no m=audio section we can accept")
        }

        let acceptedMids = Set(accepted.compactMap { offer.media[$0.index].mid })
        let answerBundle = offerBundle.map { SDPGroup(semantics: "BUNDLE", identifiers: $0.identifiers.filter(acceptedMids.contains)) }
            .flatMap { $0.identifiers.isEmpty ? nil : $0 }

        var negotiated: [NegotiatedAudio] = []
        var keyOffset = 0
        for (index, selection) in accepted {
            let offered = offer.media[index]
            var sdes: (line: CryptoAttribute, agreed: NegotiatedSDES)? = nil
            if let chosen = selection.sdes {
                let length = chosen.keys[0].keySalt.count
                guard keyOffset + length <= local.sdesKeyMaterial.count else {
                    throw SDPError(.invalidCapabilities, line: offered.line, "SDES key material runs out: \(local.sdesKeyMaterial.count) bytes, and m-section \(index)'s \(chosen.suite.name) key needs bytes \(keyOffset)..<\(keyOffset + length)")
                }
                let key = Array(local.sdesKeyMaterial[keyOffset..<(keyOffset + length)])
                keyOffset += length
                sdes = (SDESNegotiation.answerLine(to: chosen, key: key),
                        NegotiatedSDES(tag: chosen.tag, suite: chosen.suite, localKeyMaterial: key, remoteKeyMaterial: chosen.keys[0].keySalt))
            }
            let transport = try remoteTransport(of: offered, index: index, in: offer, bundle: offerBundle, defaultSetup: .active)
            let localSetup = isPlainRTP ? .holdconn : transport.setup.answer(preferring: local.setupPreference)
            let direction = offered.direction(in: offer).answer(wanting: local.direction)
            let extensions = try offered.extensionMaps().filter { local.headerExtensions.contains($0.uri) }
                .map { ExtensionMap(id: $0.id, direction: $0.direction?.reversed, uri: $0.uri) }
            let wrapped: [NegotiatedCodec] = selection.redundancy.map { [$0] } ?? []
            let payloadTypes = (selection.codecs + wrapped + selection.events).map(\.payloadType)
            let feedback = try offered.rtcpFeedback().filter { fb in
                local.rtcpFeedback.contains(fb.type) && (fb.payloadType.map(payloadTypes.contains) ?? true)
            }
            let rtcpMux = offered.isRTCPMuxed
            let reducedSize = local.rtcpReducedSize && offered.isRTCPReducedSize

            var section = MediaDescription(media: "audio", port: localPort, proto: offered.proto, formats: payloadTypes.map { String($0) })
            section.connections = [localConnection]
            section.attributes = transportAttributes(setup: localSetup)
            if let mid = offered.mid { section.attributes.append(SDPAttribute(name: "mid", value: mid)) }
            section.attributes += extensions.map { SDPAttribute($0) }
            section.attributes.append(direction.attribute)
            if direction.sends, !isPlainRTP, let stream = local.sendStream {
                section.attributes.append(SDPAttribute(MSID(streamID: stream.streamID, trackID: stream.trackID)))
            }
            if rtcpMux { section.attributes.append(SDPAttribute(name: "rtcp-mux")) }
            if reducedSize { section.attributes.append(SDPAttribute(name: "rtcp-rsize")) }
            if let sdes { section.attributes.append(SDPAttribute(sdes.line)) }
            for codec in selection.codecs + wrapped + selection.events {
                section.attributes.append(SDPAttribute(selection.offeredMaps[codec.payloadType] ?? RTPMap(payloadType: codec.payloadType, encodingName: codec.name, clockRate: codec.clockRate, channels: codec.channels == 1 ? nil : codec.channels)))
                for fb in feedback where fb.payloadType == codec.payloadType { section.attributes.append(SDPAttribute(fb)) }
                if !codec.localParameters.isEmpty {
                    section.attributes.append(SDPAttribute(FormatParameters(payloadType: codec.payloadType, parameters: codec.localParameters)))
                }
            }
            for fb in feedback where fb.payloadType == nil { section.attributes.append(SDPAttribute(fb)) }
            if direction.sends, let stream = local.sendStream {
                section.attributes.append(SDPAttribute(SSRCAttribute(ssrc: stream.ssrc, attribute: "cname", value: stream.cname)))
            }
            if local.endOfCandidates && !isPlainRTP { section.attributes.append(SDPAttribute(name: "end-of-candidates")) }
            answerSections[index] = section

            negotiated.append(NegotiatedAudio(
                mediaIndex: index, mid: offered.mid,
                codec: selection.codecs[0], codecs: selection.codecs,
                telephoneEvent: selection.events.first { $0.clockRate == selection.codecs[0].clockRate },
                payloadTypes: payloadTypes, direction: direction,
                remoteICEUsernameFragment: transport.ufrag, remoteICEPassword: transport.pwd,
                remoteICELite: offer.isICELite, remoteICEOptions: transport.options,
                remoteCandidates: transport.candidates, remoteEndOfCandidates: transport.endOfCandidates,
                remoteFingerprints: transport.fingerprints, remoteSetup: transport.setup, localSetup: localSetup,
                rtcpMux: rtcpMux, rtcpReducedSize: reducedSize, headerExtensions: extensions, rtcpFeedback: feedback,
                remotePacketTime: try offered.packetTime()?.milliseconds, remoteMaxPacketTime: try offered.maxPacketTime()?.milliseconds,
                remoteSSRCs: try uniqueSSRCs(offered), remoteAddress: (offered.connections.first ?? offer.connection)?.address,
                remotePort: offered.port,
                bundleGroup: answerBundle.flatMap { group in offered.mid.flatMap { group.identifiers.contains($0) ? group.identifiers : nil } },
                redundancy: selection.redundancy,
                sdes: sdes?.agreed
            ))
        }

        var session = SessionDescription(origin: localOrigin)
        if local.iceLite && !isPlainRTP { session.attributes.append(SDPAttribute(name: "ice-lite")) }
        if let answerBundle { session.attributes.append(SDPAttribute(answerBundle)) }
        session.media = answerSections
        return AudioAnswer(description: session, audio: negotiated)
    }

    // MARK: Making an offer

    /// Builds an offer with one audio section (`mid` 0, bundled alone), our codecs in
    /// order of preference at their `offerPayloadType`s, telephone-event for each
    /// clock rate, `a=setup:actpass` (RFC 8842 §5.2), rtcp-mux and our transport. A plain
    /// RTP endpoint with `offersSDES` offers `RTP/SAVP` with an `a=crypto` line per suite
    /// (tags 1, 2, ...), each keyed from `local.sdesKeyMaterial`.
    /// - Throws: `SDPError` `.invalidCapabilities` for unusable local settings or too little
    ///   SDES key material.
    public func makeOffer() throws(SDPError) -> SessionDescription {
        try local.validate()
        let sdesKeyLength = sdesKeyMaterialLengthForOffer
        guard local.sdesKeyMaterial.count >= sdesKeyLength else {
            throw SDPError(.invalidCapabilities, line: nil, "an SDES offer of \(local.sdesSuites.map(\.name).joined(separator: ", ")) needs \(sdesKeyLength) bytes of key material, have \(local.sdesKeyMaterial.count)")
        }
        var used = Set<UInt8>()
        var codecs: [(AudioCodec, UInt8)] = []
        for codec in local.codecs {
            let payloadType = Self.freePayloadType(preferring: codec.offerPayloadType, used: used)
            used.insert(payloadType)
            codecs.append((codec, payloadType))
        }
        if local.opusRedundancy, let opus = codecs.firstIndex(where: { $0.0.name.lowercased() == "opus" }) {
            let payloadType = Self.freePayloadType(preferring: AudioCodec.redundantOpus.offerPayloadType, used: used)
            used.insert(payloadType)
            codecs.insert((AudioCodec.redundantOpus, payloadType), at: opus + 1)
        }
        if local.telephoneEvents {
            var rates: [UInt32] = []
            for codec in local.codecs where !rates.contains(codec.clockRate) { rates.append(codec.clockRate) }
            for rate in rates {
                let event = AudioCodec.telephoneEvent(clockRate: rate)
                let payloadType = Self.freePayloadType(preferring: event.offerPayloadType, used: used)
                used.insert(payloadType)
                codecs.append((event, payloadType))
            }
        }
        let proto = isPlainRTP ? (offersSDES ? "RTP/SAVP" : "RTP/AVP") : "UDP/TLS/RTP/SAVPF"
        var section = MediaDescription(media: "audio", port: localPort, proto: proto, formats: codecs.map { String($0.1) })
        section.connections = [localConnection]
        section.attributes = transportAttributes(setup: .actpass)
        section.attributes.append(SDPAttribute(name: "mid", value: "0"))
        for (id, uri) in zip(1..., local.headerExtensions) { section.attributes.append(SDPAttribute(ExtensionMap(id: UInt16(clamping: id), uri: uri))) }
        section.attributes.append(local.direction.attribute)
        if local.direction.sends, !isPlainRTP, let stream = local.sendStream {
            section.attributes.append(SDPAttribute(MSID(streamID: stream.streamID, trackID: stream.trackID)))
        }
        section.attributes.append(SDPAttribute(name: "rtcp-mux"))
        if local.rtcpReducedSize { section.attributes.append(SDPAttribute(name: "rtcp-rsize")) }
        if offersSDES {
            section.attributes += SDESNegotiation.offerLines(suites: local.sdesSuites, keyMaterial: local.sdesKeyMaterial).map { SDPAttribute($0) }
        }
        for (codec, payloadType) in codecs {
            section.attributes.append(SDPAttribute(codec.rtpMap(payloadType: payloadType)))
            for type in local.rtcpFeedback { section.attributes.append(SDPAttribute(RTCPFeedback(payloadType: payloadType, type: type))) }
            var parameters = local.formatParameters(for: codec)
            if codec == AudioCodec.redundantOpus, let opus = codecs.first(where: { $0.0.name.lowercased() == "opus" }) {
                parameters = Self.redundancyParameters(primary: opus.1)
            }
            if !parameters.isEmpty { section.attributes.append(SDPAttribute(FormatParameters(payloadType: payloadType, parameters: parameters))) }
        }
        if local.direction.sends, let stream = local.sendStream {
            section.attributes.append(SDPAttribute(SSRCAttribute(ssrc: stream.ssrc, attribute: "cname", value: stream.cname)))
        }
        if local.endOfCandidates && !isPlainRTP { section.attributes.append(SDPAttribute(name: "end-of-candidates")) }

        var session = SessionDescription(origin: localOrigin)
        if local.iceLite && !isPlainRTP { session.attributes.append(SDPAttribute(name: "ice-lite")) }
        // BUNDLE (RFC 8843) is WebRTC's; a plain RTP peer need not know the group.
        if !isPlainRTP { session.attributes.append(SDPAttribute(SDPGroup(semantics: "BUNDLE", identifiers: ["0"]))) }
        session.media = [section]
        return session
    }

    // MARK: Accepting an answer to our offer

    /// Checks that `answer` is a valid answer to our `offer` (RFC 3264 §6-7: same
    /// sections in the same order, only offered payload types and header extensions,
    /// a compatible direction, rtcp-mux only if offered, a concrete DTLS role, BUNDLE
    /// only over offered mids) and extracts what was agreed for each accepted audio
    /// section. A plain RTP endpoint also checks the answer keeps the offered profile and,
    /// for `RTP/SAVP`, answers with one `a=crypto` line naming an offered tag and suite.
    /// - Throws: `SDPError` `.invalidAnswer`, `.noCommonCodec`,
    ///   `.missingICECredentials`, `.missingFingerprint`, `.malformedAttribute`,
    ///   `.noAudioMedia` (every audio section rejected).
    public func acceptAnswer(_ answer: SessionDescription, to offer: SessionDescription) throws(SDPError) -> [NegotiatedAudio] {
        guard answer.media.count == offer.media.count else {
            throw SDPError(.invalidAnswer, line: nil, "answer has \(answer.media.count) media sections, the offer had \(offer.media.count)")
        }
        let offerBundle = try offer.bundleGroup()
        let answerBundle = try answer.bundleGroup()
        if let answerBundle {
            let offered = Set(offerBundle?.identifiers ?? [])
            guard answerBundle.identifiers.allSatisfy(offered.contains) else {
                throw SDPError(.invalidAnswer, line: answer.attributes(named: "group").first?.line, "answer BUNDLE group \(answerBundle.identifiers) is not within the offered one \(offerBundle?.identifiers ?? [])")
            }
        }
        var negotiated: [NegotiatedAudio] = []
        for (index, (offered, answered)) in zip(offer.media, answer.media).enumerated() {
            guard offered.media == answered.media else {
                throw SDPError(.invalidAnswer, line: answered.line, "m-section \(index) is \(answered.media) in the answer but \(offered.media) in the offer")
            }
            // An answerer that does not know grouping (RFC 5888 §9.2: most SIP endpoints and
            // trunks) leaves `mid` out; a different one is an error.
            guard offered.mid == answered.mid || answered.mid == nil || answered.port == 0 else {
                throw SDPError(.invalidAnswer, line: answered.line, "m-section \(index) has mid \(answered.mid ?? "none") in the answer but \(offered.mid ?? "none") in the offer")
            }
            let bundled = answered.mid.map { answerBundle?.identifiers.contains($0) ?? false } ?? false
            guard offered.media == "audio", answered.port != 0 || (bundled && answered.isBundleOnly) else { continue }

            // Codecs: only offered payload types, with the offered meaning.
            let offeredMaps = try codecMaps(of: offered)
            let answeredMaps = try codecMaps(of: answered)
            let offeredFmtps = try offered.formatParameters()
            let answeredFmtps = try answered.formatParameters()
            var codecs: [NegotiatedCodec] = []
            var events: [NegotiatedCodec] = []
            var redundancy: NegotiatedCodec? = nil
            for payloadType in answered.payloadTypes {
                guard let ours = offeredMaps[payloadType] else {
                    throw SDPError(.invalidAnswer, line: answered.line, "answer uses payload type \(payloadType), which the offer did not include")
                }
                if let theirs = answeredMaps[payloadType], theirs.encodingName.lowercased() != ours.encodingName.lowercased() || theirs.clockRate != ours.clockRate {
                    throw SDPError(.invalidAnswer, line: answered.line, "answer maps payload type \(payloadType) to \(theirs.encodingName)/\(theirs.clockRate), the offer to \(ours.encodingName)/\(ours.clockRate)")
                }
                if local.opusRedundancy, AudioCodec.redundantOpus.matches(ours) {
                    redundancy = NegotiatedCodec(
                        payloadType: payloadType, name: ours.encodingName, clockRate: ours.clockRate, channels: ours.channelCount,
                        localParameters: offeredFmtps.first { $0.payloadType == payloadType }?.parameters ?? [],
                        remoteParameters: answeredFmtps.first { $0.payloadType == payloadType }?.parameters ?? [])
                    continue
                }
                let isEvent = ours.encodingName.lowercased() == "telephone-event"
                guard let codec = isEvent ? AudioCodec.telephoneEvent(clockRate: ours.clockRate) : local.codecs.first(where: { $0.matches(ours) }) else { continue }
                let negotiatedCodec = NegotiatedCodec(
                    payloadType: payloadType, name: codec.name, clockRate: codec.clockRate, channels: codec.channels,
                    localParameters: offeredFmtps.first { $0.payloadType == payloadType }?.parameters ?? [],
                    remoteParameters: answeredFmtps.first { $0.payloadType == payloadType }?.parameters ?? [])
                if isEvent { events.append(negotiatedCodec) } else { codecs.append(negotiatedCodec) }
            }
            guard let primary = codecs.first else {
                throw SDPError(.noCommonCodec, line: answered.line, "answer for m-section \(index) selects no audio codec we offered")
            }

            let transport = try remoteTransport(of: answered, index: index, in: answer, bundle: answerBundle, defaultSetup: .passive)
            let localSetup: DTLSSetup
            switch isPlainRTP ? .holdconn : transport.setup {
            case .active: localSetup = .passive
            case .passive: localSetup = .active
            case .holdconn: localSetup = .holdconn
            case .actpass:
                throw SDPError(.invalidAnswer, line: answered.attribute(named: "setup")?.line ?? answered.line, "an answer must not say a=setup:actpass (RFC 8842 §5.3)")
            }
            guard offered.isRTCPMuxed || !answered.isRTCPMuxed else {
                throw SDPError(.invalidAnswer, line: answered.attribute(named: "rtcp-mux")?.line, "answer has a=rtcp-mux but the offer did not")
            }
            let offeredDirection = offered.direction(in: offer)
            let answeredDirection = answered.direction(in: answer)
            guard (!answeredDirection.sends || offeredDirection.receives), (!answeredDirection.receives || offeredDirection.sends) else {
                throw SDPError(.invalidAnswer, line: answered.line, "answer direction \(answeredDirection.rawValue) does not fit the offered \(offeredDirection.rawValue) (RFC 3264 §6.1)")
            }
            let offeredExtensions = try offered.extensionMaps()
            let extensions = try answered.extensionMaps()
            for ext in extensions where !offeredExtensions.contains(where: { $0.id == ext.id && $0.uri == ext.uri }) {
                throw SDPError(.invalidAnswer, line: answered.line, "answer uses header extension \(ext.id) \(ext.uri), which the offer did not")
            }
            var sdes: NegotiatedSDES? = nil
            if isPlainRTP {
                guard answered.proto == offered.proto else {
                    throw SDPError(.invalidAnswer, line: answered.line, "m-section \(index) is \(answered.proto) in the answer but \(offered.proto) in the offer (RFC 3264 §6)")
                }
                if Self.sdesProtocols.contains(offered.proto) { sdes = try SDESNegotiation.accept(answered, to: offered, index: index) }
            }
            let payloadTypes = answered.payloadTypes
            negotiated.append(NegotiatedAudio(
                mediaIndex: index, mid: offered.mid, codec: primary, codecs: codecs,
                telephoneEvent: events.first { $0.clockRate == primary.clockRate },
                payloadTypes: payloadTypes, direction: answeredDirection.reversed,
                remoteICEUsernameFragment: transport.ufrag, remoteICEPassword: transport.pwd,
                remoteICELite: answer.isICELite, remoteICEOptions: transport.options,
                remoteCandidates: transport.candidates, remoteEndOfCandidates: transport.endOfCandidates,
                remoteFingerprints: transport.fingerprints, remoteSetup: transport.setup, localSetup: localSetup,
                rtcpMux: answered.isRTCPMuxed, rtcpReducedSize: offered.isRTCPReducedSize && answered.isRTCPReducedSize,
                headerExtensions: extensions,
                rtcpFeedback: try answered.rtcpFeedback().filter { fb in fb.payloadType.map(payloadTypes.contains) ?? true },
                remotePacketTime: try answered.packetTime()?.milliseconds, remoteMaxPacketTime: try answered.maxPacketTime()?.milliseconds,
                remoteSSRCs: try uniqueSSRCs(answered), remoteAddress: (answered.connections.first ?? answer.connection)?.address,
                remotePort: answered.port,
                bundleGroup: bundled ? answerBundle?.identifiers : nil,
                // RED counts only as a wrapper of the Opus we send and receive.
                redundancy: primary.name.lowercased() == "opus"
                    && redundancy.map { Self.redundancyWraps($0.localParameters, primary: primary.payloadType) } == true
                    ? redundancy : nil,
                sdes: sdes
            ))
        }
        guard !negotiated.isEmpty else {
            throw SDPError(.noAudioMedia, line: nil, "the answer rejected every audio section")
        }
        return negotiated
    }

    // MARK: Pieces

    /// The codecs chosen for one offered section.
    private struct CodecSelection {
        var codecs: [NegotiatedCodec]
        /// RED wrapping the Opus payload type, when the offer has it and we allow it.
        var redundancy: NegotiatedCodec?
        var events: [NegotiatedCodec]
        /// The offer's rtpmaps for the chosen payload types, echoed in the answer.
        var offeredMaps: [UInt8: RTPMap]
        /// The offered `a=crypto` line we take, for an SDES section.
        var sdes: CryptoAttribute? = nil
    }

    private enum Decision {
        case accept(CodecSelection)
        /// Rejected; the error says why when it was an audio section we might have taken.
        case reject(SDPError?)
    }

    private func decide(_ section: MediaDescription, index: Int, bundle: SDPGroup?, in offer: SessionDescription) throws(SDPError) -> Decision {
        guard section.media == "audio" else { return .reject(nil) }
        let bundled = section.mid.map { bundle?.identifiers.contains($0) ?? false } ?? false
        // RFC 3264 §6: a zero port in the offer disables the stream, unless it is a
        // bundle-only section (RFC 8843 §6).
        guard section.port != 0 || (bundled && section.isBundleOnly) else {
            return .reject(SDPError(.noAudioMedia, line: section.line, "m-section \(index) (audio) is disabled in the offer (port 0)"))
        }
        let protocols = isPlainRTP ? Self.plainRTPProtocols : Self.supportedProtocols
        guard protocols.contains(section.proto) else {
            return .reject(SDPError(.unsupportedProtocol, line: section.line, "m-section \(index) (audio) uses \(section.proto); we need one of \(protocols.sorted().joined(separator: ", "))"))
        }
        var sdes: CryptoAttribute? = nil
        if isPlainRTP, Self.sdesProtocols.contains(section.proto) {
            switch SDESNegotiation.choose(in: section, index: index, of: offer, suites: local.sdesSuites) {
            case .success(let chosen): sdes = chosen
            case .failure(let problem): return .reject(problem)
            }
        }
        let offered = try codecMaps(of: section)
        let fmtps = try section.formatParameters()
        var codecs: [NegotiatedCodec] = []
        var maps: [UInt8: RTPMap] = [:]
        for codec in local.codecs {
            // The offerer's first payload type for this codec (RFC 3264 §6.1).
            guard let payloadType = section.payloadTypes.first(where: { offered[$0].map(codec.matches) ?? false }),
                  !codecs.contains(where: { $0.payloadType == payloadType }) else { continue }
            maps[payloadType] = offered[payloadType]
            codecs.append(NegotiatedCodec(
                payloadType: payloadType, name: codec.name, clockRate: codec.clockRate, channels: codec.channels,
                localParameters: local.formatParameters(for: codec),
                remoteParameters: fmtps.first { $0.payloadType == payloadType }?.parameters ?? []))
        }
        guard !codecs.isEmpty else {
            let names = section.payloadTypes.compactMap { offered[$0] }.map { "\($0.encodingName)/\($0.clockRate)" }
            return .reject(SDPError(.noCommonCodec, line: section.line, "m-section \(index) (audio) offers \(names.isEmpty ? "no known codec" : names.joined(separator: ", ")); we support \(local.codecs.map { "\($0.name)/\($0.clockRate)" }.joined(separator: ", "))"))
        }
        var redundancy: NegotiatedCodec? = nil
        if local.opusRedundancy, let opus = codecs.first(where: { $0.name.lowercased() == "opus" }),
           let payloadType = section.payloadTypes.first(where: { pt in
               offered[pt].map(AudioCodec.redundantOpus.matches) == true
                   && Self.redundancyWraps(fmtps.first { $0.payloadType == pt }?.parameters ?? [], primary: opus.payloadType)
           }) {
            maps[payloadType] = offered[payloadType]
            redundancy = NegotiatedCodec(
                payloadType: payloadType, name: AudioCodec.redundantOpus.name, clockRate: 48000, channels: 2,
                localParameters: Self.redundancyParameters(primary: opus.payloadType),
                remoteParameters: fmtps.first { $0.payloadType == payloadType }?.parameters ?? [])
        }
        var events: [NegotiatedCodec] = []
        if local.telephoneEvents {
            // RFC 4733 §2.1: events share the timestamp clock of the audio they go with.
            var rates: [UInt32] = []
            for codec in codecs where !rates.contains(codec.clockRate) { rates.append(codec.clockRate) }
            for rate in rates {
                let event = AudioCodec.telephoneEvent(clockRate: rate)
                guard let payloadType = section.payloadTypes.first(where: { offered[$0].map(event.matches) ?? false }) else { continue }
                maps[payloadType] = offered[payloadType]
                events.append(NegotiatedCodec(
                    payloadType: payloadType, name: event.name, clockRate: rate, channels: 1,
                    localParameters: local.formatParameters(for: event),
                    remoteParameters: fmtps.first { $0.payloadType == payloadType }?.parameters ?? []))
            }
        }
        return .accept(CodecSelection(codecs: codecs, redundancy: redundancy, events: events, offeredMaps: maps, sdes: sdes))
    }

    /// Payload type -> rtpmap for a section's formats, static ones filled in.
    private func codecMaps(of section: MediaDescription) throws(SDPError) -> [UInt8: RTPMap] {
        var maps: [UInt8: RTPMap] = [:]
        for map in try section.rtpMaps() where maps[map.payloadType] == nil { maps[map.payloadType] = map }
        for payloadType in section.payloadTypes where maps[payloadType] == nil {
            maps[payloadType] = AudioCodec.staticMapping(payloadType)
        }
        return maps
    }

    /// The peer's transport parameters for one section.
    private struct RemoteTransport {
        var ufrag: String
        var pwd: String
        var options: [String]
        var candidates: [ICECandidate]
        var endOfCandidates: Bool
        var fingerprints: [Fingerprint]
        var setup: DTLSSetup
    }

    /// Reads ICE and DTLS parameters for `section`: its own, else (when bundled) those
    /// of the BUNDLE-tagged section (RFC 8843 §7.1.1: the first mid of the group), else
    /// session-level ones.
    /// RFC 4145 §4.1: without `a=setup` an offerer is `active` and an answerer
    /// `passive`; `defaultSetup` says which applies.
    private func remoteTransport(of section: MediaDescription, index: Int, in description: SessionDescription, bundle: SDPGroup?, defaultSetup: DTLSSetup) throws(SDPError) -> RemoteTransport {
        // Plain RTP goes to the c=/m= address: no ICE credentials, candidates or fingerprints.
        if isPlainRTP {
            return RemoteTransport(ufrag: "", pwd: "", options: [], candidates: [], endOfCandidates: false, fingerprints: [], setup: .holdconn)
        }
        var source = section
        if section.iceUsernameFragment == nil, let mid = section.mid, let bundle, bundle.identifiers.contains(mid),
           let tag = bundle.identifiers.first, let tagged = description.media.first(where: { $0.mid == tag && $0.port != 0 }) {
            source = tagged
        }
        guard let ufrag = source.iceUsernameFragment ?? description.iceUsernameFragment,
              let pwd = source.icePassword ?? description.icePassword else {
            throw SDPError(.missingICECredentials, line: section.line, "m-section \(index) (audio) has no a=ice-ufrag/a=ice-pwd, nor does the session")
        }
        var fingerprints = try source.fingerprints()
        if fingerprints.isEmpty { fingerprints = try description.fingerprints() }
        guard !fingerprints.isEmpty else {
            throw SDPError(.missingFingerprint, line: section.line, "m-section \(index) (audio) has no a=fingerprint, nor does the session (DTLS-SRTP needs one, RFC 8122)")
        }
        var setup = try source.setup()
        if setup == nil { setup = try description.setup() }
        // A candidate we cannot parse is skipped rather than failing the call; the
        // JSON form of the description still shows why it did not parse.
        let candidates = source.attributes(named: ICECandidate.attributeName).compactMap { try? $0.parsed(as: ICECandidate.self) }
        return RemoteTransport(
            ufrag: ufrag, pwd: pwd, options: description.iceOptions + source.iceOptions,
            candidates: candidates, endOfCandidates: source.hasEndOfCandidates,
            fingerprints: fingerprints, setup: setup ?? defaultSetup)
    }

    private func uniqueSSRCs(_ section: MediaDescription) throws(SDPError) -> [UInt32] {
        var out: [UInt32] = []
        for attribute in try section.ssrcAttributes() where !out.contains(attribute.ssrc) { out.append(attribute.ssrc) }
        return out
    }

    /// A rejected section (RFC 3264 §6): port 0, the offered formats, mid kept so the
    /// offerer can match it (RFC 8843 §7.3.3).
    private func rejected(_ section: MediaDescription) -> MediaDescription {
        var out = MediaDescription(media: section.media, port: 0, proto: section.proto, formats: section.formats)
        out.connections = [SessionDescription.Connection(address: "0.0.0.0")]
        if let mid = section.mid { out.attributes = [SDPAttribute(name: "mid", value: mid)] }
        return out
    }

    /// ICE candidates and credentials, then DTLS fingerprint and role; none for plain RTP.
    private func transportAttributes(setup: DTLSSetup) -> [SDPAttribute] {
        if isPlainRTP { return [] }
        var attributes = local.candidates.map { SDPAttribute($0) }
        attributes.append(SDPAttribute(name: "ice-ufrag", value: local.iceUsernameFragment))
        attributes.append(SDPAttribute(name: "ice-pwd", value: local.icePassword))
        if !local.iceOptions.isEmpty { attributes.append(SDPAttribute(name: "ice-options", value: local.iceOptions.joined(separator: " "))) }
        attributes.append(SDPAttribute(local.fingerprint))
        attributes.append(SDPAttribute(setup))
        return attributes
    }

    private var isPlainRTP: Bool {
        if case .plainRTP = local.transport { return true }
        return false
    }

    private var offersSDES: Bool { isPlainRTP && local.offersSDES }

    // MARK: SDES key material

    /// Bytes of `local.sdesKeyMaterial` `makeOffer()` takes: one key per SDES suite when a
    /// plain RTP endpoint offers SDES, else none.
    public var sdesKeyMaterialLengthForOffer: Int {
        offersSDES ? SDESNegotiation.offerKeyMaterialLength(local.sdesSuites) : 0
    }

    /// Enough bytes of `local.sdesKeyMaterial` for `answer(to: offer)`: the longest key of
    /// our SDES suites for each `RTP/SAVP` or `RTP/SAVPF` audio section (at most what the
    /// answer takes), none for a WebRTC endpoint.
    public func sdesKeyMaterialLength(toAnswer offer: SessionDescription) -> Int {
        guard isPlainRTP else { return 0 }
        let longest = local.sdesSuites.compactMap(\.keySaltLength).max() ?? 0
        return offer.media.filter { $0.media == "audio" && Self.sdesProtocols.contains($0.proto) }.count * longest
    }

    private var localPort: UInt16 {
        if case .plainRTP(_, let port) = local.transport { return port }
        return local.defaultCandidate?.port ?? 9
    }

    private var localConnection: SessionDescription.Connection {
        if case .plainRTP(let address, _) = local.transport { return SessionDescription.Connection(address: address) }
        return SessionDescription.Connection(address: local.defaultCandidate?.address ?? "0.0.0.0")
    }

    private var localOrigin: SessionDescription.Origin {
        SessionDescription.Origin(sessionID: String(local.sessionID), sessionVersion: String(local.sessionVersion),
                                  addressType: local.originAddress.contains(":") ? "IP6" : "IP4", address: local.originAddress)
    }

    /// `preferred` if free, else the first free dynamic payload type (RFC 3551 §3: 96-127).
    /// RED's fmtp as Chromium writes it (RFC 2198 §5): the primary's payload type once per
    /// block, `111/111` for one redundant Opus frame.
    static func redundancyParameters(primary: UInt8) -> [FormatParameters.Parameter] {
        [.init(name: "\(primary)/\(primary)")]
    }

    /// Whether a RED fmtp lists only `primary` (`111/111`, `111/111/111`); an absent fmtp
    /// says nothing about the blocks and is taken as Opus too.
    static func redundancyWraps(_ parameters: [FormatParameters.Parameter], primary: UInt8) -> Bool {
        guard let first = parameters.first else { return true }
        let parts = first.name.split(separator: "/", omittingEmptySubsequences: false)
        return first.value == nil && parts.count >= 2 && parts.allSatisfy { UInt8($0) == primary }
    }

    private static func freePayloadType(preferring preferred: UInt8, used: Set<UInt8>) -> UInt8 {
        if !used.contains(preferred) { return preferred }
        return (96...127).first { !used.contains($0) } ?? preferred
    }
}
