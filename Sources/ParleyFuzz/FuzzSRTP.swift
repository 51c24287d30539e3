import ParleySRTP

/// Fixed-key inbound sessions, one per profile. The fuzzer is single-threaded, and random
/// input never authenticates, so the sessions' state does not drift between inputs.
nonisolated(unsafe) private let fuzzInbound: [SRTPSession] = SRTPProfile.allCases.map { profile in
    try! SRTPSession(profile: profile, keyMaterial: (0..<profile.keyMaterialLength).map { UInt8($0) }, direction: .inbound)
}

/// SRTP/SRTCP: the input goes to unprotect and unprotectRTCP of a fixed-key session for each
/// profile (must throw, never trap, and be counted). Then, read as a plain packet, it is
/// protected by a fresh session pair: whatever protects must unprotect to the input exactly,
/// and the protected packet with one byte changed (position and bits chosen by the input)
/// must be refused.
func fuzzSRTP(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    for session in fuzzInbound {
        let before = session.counters
        let rtp = try? session.unprotect(srtp: bytes)
        let rtcp = try? session.unprotectRTCP(srtcp: bytes)
        let after = session.counters
        guard after.unprotected &+ after.dropped == before.unprotected &+ before.dropped &+ 2 else {
            fatalError("SRTP counters did not count both calls: \(before) -> \(after)")
        }
        if let rtp, rtp.count > bytes.count { fatalError("unprotect grew the packet") }
        if let rtcp, rtcp.count > bytes.count { fatalError("unprotectRTCP grew the packet") }
    }
    for profile in SRTPProfile.allCases {
        let key = (0..<profile.keyMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let sender = try! SRTPSession(profile: profile, keyMaterial: key, direction: .outbound)
        let receiver = try! SRTPSession(profile: profile, keyMaterial: key, direction: .inbound)
        if let protected = try? sender.protect(rtp: bytes) {
            check(protected, original: bytes, trailer: profile.rtpTrailerLength) { try receiver.unprotect(srtp: $0) }
        }
        if let protected = try? sender.protectRTCP(rtcp: bytes) {
            check(protected, original: bytes, trailer: profile.rtcpTrailerLength) { try receiver.unprotectRTCP(srtcp: $0) }
        }
    }
}

private func check(_ protected: [UInt8], original: [UInt8], trailer: Int, unprotect: ([UInt8]) throws -> [UInt8]) {
    guard protected.count == original.count + trailer else {
        fatalError("protect produced \(protected.count) bytes from \(original.count), trailer \(trailer)")
    }
    var tampered = protected
    let position = original.isEmpty ? 0 : Int(original[0]) % protected.count
    tampered[position] ^= original.count > 1 && original[1] != 0 ? original[1] : 0x01
    if (try? unprotect(tampered)) != nil { fatalError("tampered packet (byte \(position)) was accepted") }
    guard let plain = try? unprotect(protected), plain == original else {
        fatalError("protect/unprotect round trip failed for \(original)")
    }
}
