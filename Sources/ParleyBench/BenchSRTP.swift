import ParleySRTP

/// SRTP protect/unprotect on the relay's hot path: a 172-byte RTP packet (12-byte header,
/// 160-byte payload, e.g. 20 ms of PCMU) per profile, through the raw-buffer API a relay's
/// I/O loop uses and through the `[UInt8]` API, plus the forwarding step of an anchored
/// call (unprotect with leg A's inbound key, protect with leg B's outbound key).
func srtpBenchmarks() -> [Benchmark] {
    SRTPProfile.allCases.flatMap { profile in
        let name = switch profile {
        case .aes128CmHmacSha1_80: "AES_CM_128_HMAC_SHA1_80"
        case .aes128CmHmacSha1_32: "AES_CM_128_HMAC_SHA1_32"
        case .aeadAes128Gcm: "AEAD_AES_128_GCM"
        }
        return [
            Benchmark(format: "srtp", operation: "protect \(name)", messageBytes: 172, body: protectBody(profile, arrays: false)),
            Benchmark(format: "srtp", operation: "protect \(name) ([UInt8])", messageBytes: 172, body: protectBody(profile, arrays: true)),
            Benchmark(format: "srtp", operation: "unprotect \(name)", messageBytes: 172, body: unprotectBody(profile, arrays: false, forward: false)),
            Benchmark(format: "srtp", operation: "unprotect \(name) ([UInt8])", messageBytes: 172, body: unprotectBody(profile, arrays: true, forward: false)),
            Benchmark(format: "srtp", operation: "forward \(name): unprotect A, protect B", messageBytes: 172, body: unprotectBody(profile, arrays: false, forward: true)),
        ]
    }
}

private let benchSSRC: UInt32 = 0x5eed_f00d

private func keyMaterial(_ profile: SRTPProfile, _ seed: UInt8) -> [UInt8] {
    (0..<profile.keyMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 29) ^ seed }
}

private func plainPacket(sequence: UInt16) -> [UInt8] {
    var packet: [UInt8] = [0x80, 0x00, UInt8(sequence >> 8), UInt8(sequence & 0xff), 0, 0, 0x01, 0x40]
    packet += [UInt8(benchSSRC >> 24), UInt8(benchSSRC >> 16 & 0xff), UInt8(benchSSRC >> 8 & 0xff), UInt8(benchSSRC & 0xff)]
    packet += (0..<160).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    return packet
}

/// Protects with a fresh sequence number each call (the sender refuses repeats).
private func protectBody(_ profile: SRTPProfile, arrays: Bool) -> () -> Void {
    let session = try! SRTPSession(profile: profile, keyMaterial: keyMaterial(profile, 1), direction: .outbound)
    let template = plainPacket(sequence: 0)
    var buffer = [UInt8](repeating: 0, count: 1500)
    var sequence: UInt16 = 0
    return {
        sequence &+= 1
        if arrays {
            var packet = template
            packet[2] = UInt8(sequence >> 8)
            packet[3] = UInt8(sequence & 0xff)
            benchmarkSink &+= try! session.protect(rtp: packet).count
        } else {
            buffer.withUnsafeMutableBytes { raw in
                template.withUnsafeBytes { raw.copyMemory(from: $0) }
                raw[2] = UInt8(sequence >> 8)
                raw[3] = UInt8(sequence & 0xff)
                benchmarkSink &+= try! session.protect(buffer: raw, length: template.count)
            }
        }
    }
}

/// Unprotects a ring of 4096 packets protected up front; when the ring restarts, the stream
/// is removed so that the replay check sees a new stream rather than replays (amortised:
/// one `removeStream` per 4096 packets). With `forward`, each packet is then protected
/// again with a second session, as a relay between two legs does.
private func unprotectBody(_ profile: SRTPProfile, arrays: Bool, forward: Bool) -> () -> Void {
    let upstream = try! SRTPSession(profile: profile, keyMaterial: keyMaterial(profile, 2), direction: .outbound)
    let legA = try! SRTPSession(profile: profile, keyMaterial: keyMaterial(profile, 2), direction: .inbound)
    let legB = try! SRTPSession(profile: profile, keyMaterial: keyMaterial(profile, 3), direction: .outbound)
    let ring = (0..<4096).map { try! upstream.protect(rtp: plainPacket(sequence: UInt16($0))) }
    var buffer = [UInt8](repeating: 0, count: 1500)
    var index = 0
    return {
        if index == ring.count {
            index = 0
            legA.removeStream(ssrc: benchSSRC)
            legB.removeStream(ssrc: benchSSRC)
        }
        let packet = ring[index]
        index += 1
        if arrays {
            benchmarkSink &+= try! legA.unprotect(srtp: packet).count
        } else {
            buffer.withUnsafeMutableBytes { raw in
                packet.withUnsafeBytes { raw.copyMemory(from: $0) }
                let plain = try! legA.unprotect(buffer: raw, length: packet.count)
                benchmarkSink &+= forward ? try! legB.protect(buffer: raw, length: plain) : plain
            }
        }
    }
}
