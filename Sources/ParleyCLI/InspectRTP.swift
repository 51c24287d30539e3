import ParleyRTP

/// An RTP packet whose payload type was named telephone-event: the payload decoded as
/// RFC 4733 event blocks, beside the packet's own fields.
private struct InspectedTelephoneEventPacket: Encodable {
    let packet: RTPPacket
    let events: [TelephoneEvent]

    enum CodingKeys: String, CodingKey { case telephoneEvents }

    func encode(to encoder: any Encoder) throws {
        try packet.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(events, forKey: .telephoneEvents)
    }
}

extension InspectFormat {
    func inspectRTP(_ input: [UInt8], telephoneEventPayloadType: UInt8?) throws(InspectCommand.Failure) -> String {
        // RFC 5761 §4: on a muxed port, a second byte of 192-223 is RTCP. Saying so beats
        // printing an RTP header with a nonsense payload type.
        if RTPMultiplexing.classify(input) == .rtcp {
            throw InspectCommand.Failure(message: "invalid rtp: byte 1 is \(input[1]), an RTCP packet type (RFC 5761 §4); try 'parley inspect rtcp'")
        }
        let packet: RTPPacket
        do { packet = try RTPPacket(parsing: input) } catch { throw .invalid(.rtp, error) }
        if let telephoneEventPayloadType, packet.payloadType == telephoneEventPayloadType {
            let events: [TelephoneEvent]
            do { events = try TelephoneEvent.parseBlocks(packet.payload) } catch { throw .invalid(.rtp, error) }
            return try InspectCommand.json(InspectedTelephoneEventPacket(packet: packet, events: events))
        }
        return try InspectCommand.json(packet)
    }

    func inspectRTCP(_ input: [UInt8]) throws(InspectCommand.Failure) -> String {
        let compound: RTCPCompoundPacket
        do { compound = try RTCPCompoundPacket(parsing: input) } catch { throw .invalid(.rtcp, error) }
        return try InspectCommand.json(compound)
    }
}
