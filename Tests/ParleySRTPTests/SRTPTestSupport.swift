import ParleySRTP

/// Bytes from hex text; spaces and newlines are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = text.utf8.compactMap { c -> UInt8? in
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    precondition(digits.count % 2 == 0, "odd number of hex digits in test data")
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

enum Keys {
    /// RFC 3711 Appendix B.3 master key || master salt.
    static let aesCM = hex("E1F97A0D3E018BE0D64FA32C06DE4139 0EC675AD498AFEEBB6960B3AABE6")
    /// RFC 7714 §16 key || salt, used here as master key || master salt.
    static let gcm = hex("000102030405060708090a0b0c0d0e0f 517569642070726f2071756f")

    static func material(_ profile: SRTPProfile) -> [UInt8] {
        switch profile {
        case .aes128CmHmacSha1_80, .aes128CmHmacSha1_32: aesCM
        case .aeadAes128Gcm: gcm
        }
    }
}

/// An outbound and an inbound session sharing one key, as the two ends of one direction.
func sessionPair(_ profile: SRTPProfile, window: Int = SRTPSession.defaultReplayWindow) throws -> (sender: SRTPSession, receiver: SRTPSession) {
    let key = Keys.material(profile)
    return (try SRTPSession(profile: profile, keyMaterial: key, direction: .outbound, replayWindow: window),
            try SRTPSession(profile: profile, keyMaterial: key, direction: .inbound, replayWindow: window))
}

/// A plain RTP packet: version 2, payload type 111, the given sequence number and SSRC.
func rtpPacket(sequence: UInt16, ssrc: UInt32, payloadLength: Int = 160, fill: UInt8 = 0x5a) -> [UInt8] {
    var packet: [UInt8] = [0x80, 0x6f, UInt8(sequence >> 8), UInt8(sequence & 0xff)]
    let timestamp = UInt32(sequence) &* 960
    for shift in stride(from: 24, through: 0, by: -8) { packet.append(UInt8(truncatingIfNeeded: timestamp >> UInt32(shift))) }
    for shift in stride(from: 24, through: 0, by: -8) { packet.append(UInt8(truncatingIfNeeded: ssrc >> UInt32(shift))) }
    packet += (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0) ^ fill }
    return packet
}

/// A receiver report with one report block (RFC 3550 §6.4.2), from `ssrc`.
func rtcpReceiverReport(ssrc: UInt32) -> [UInt8] {
    var packet: [UInt8] = [0x81, 0xc9, 0x00, 0x07]
    for shift in stride(from: 24, through: 0, by: -8) { packet.append(UInt8(truncatingIfNeeded: ssrc >> UInt32(shift))) }
    packet += [0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00,
               0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
    return packet
}
