import ParleyRTP

extension InspectFormat {
    func inspectRTP(_ input: [UInt8]) throws(InspectCommand.Failure) -> String {
        // RFC 5761 §4: on a muxed port, a second byte of 192-223 is RTCP. Saying so beats
        // printing an RTP header with a nonsense payload type.
        if RTPMultiplexing.classify(input) == .rtcp {
            throw InspectCommand.Failure(message: "invalid rtp: byte 1 is \(input[1]), an RTCP packet type (RFC 5761 §4); try 'parley inspect rtcp'")
        }
        let packet: RTPPacket
        do { packet = try RTPPacket(parsing: input) } catch { throw .invalid(.rtp, error) }
        return try InspectCommand.json(packet)
    }

    func inspectRTCP(_ input: [UInt8]) throws(InspectCommand.Failure) -> String {
        let compound: RTCPCompoundPacket
        do { compound = try RTCPCompoundPacket(parsing: input) } catch { throw .invalid(.rtcp, error) }
        return try InspectCommand.json(compound)
    }
}
