import Foundation
import ParleyRTP

/// RTP: parse; a packet that parses must serialize to the input and re-parse equal; its
/// RFC 8285 elements, if they decode, must rebuild to the same element list; an RFC 4733
/// reading of the payload must serialize back; the JSON form must encode. The input is
/// also fed as sequence numbers and timestamps to the A.1/A.3/A.8 state, which must not trap.
func fuzzRTP(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    exerciseReceptionState(bytes)
    guard let packet = try? RTPPacket(parsing: bytes) else { return }
    guard let again = try? packet.serialized(), again == bytes else {
        fatalError("RTP round trip changed the bytes: \(bytes) -> \(String(describing: try? packet.serialized()))")
    }
    guard (try? RTPPacket(parsing: again)) == packet else { fatalError("RTP re-parse differs") }
    if let ext = packet.headerExtension, let elements = try? ext.elements() {
        let rebuilt: RTPHeaderExtension?
        switch ext.form {
        case .oneByte: rebuilt = try? RTPHeaderExtension.oneByte(elements)
        case .twoByte(let appBits): rebuilt = try? RTPHeaderExtension.twoByte(elements, appBits: appBits)
        case .generic: rebuilt = ext
        }
        guard let rebuilt, (try? rebuilt.elements()) == elements else {
            fatalError("RTP header extension elements do not rebuild: \(elements)")
        }
        for element in elements where ext.value(forID: element.id) == nil {
            fatalError("element \(element.id) decoded but not found by value(forID:)")
        }
    }
    if let events = try? TelephoneEvent.parseBlocks(packet.payload) {
        var out: [UInt8] = []
        for event in events {
            guard (try? event.serialize(into: &out)) != nil else { fatalError("parsed telephone-event does not serialize") }
        }
        guard out == Array(packet.payload) else { fatalError("telephone-event round trip changed the bytes") }
    }
    guard (try? JSONEncoder().encode(packet)) != nil else { fatalError("RTP JSON encoding failed") }
}

/// RTCP: parse; a compound that parses must serialize to the input and re-parse equal,
/// and its JSON form must encode.
func fuzzRTCP(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    guard let compound = try? RTCPCompoundPacket(parsing: bytes) else { return }
    guard let again = try? compound.serialized(), again == bytes else {
        fatalError("RTCP round trip changed the bytes: \(bytes) -> \(String(describing: try? compound.serialized()))")
    }
    guard (try? RTCPCompoundPacket(parsing: again)) == compound else { fatalError("RTCP re-parse differs") }
    for case .feedback(let feedback) in compound.packets {
        if case .genericNACK(let entries) = feedback.message {
            let lost = entries.flatMap(\.lostSequenceNumbers)
            let rebuilt = RTCPFeedback.genericNACK(senderSSRC: feedback.senderSSRC, mediaSSRC: feedback.mediaSSRC, lost: lost)
            guard case .genericNACK(let again) = rebuilt.message, Set(again.flatMap(\.lostSequenceNumbers)) == Set(lost) else {
                fatalError("NACK rebuild lost sequence numbers")
            }
        }
    }
    guard (try? JSONEncoder().encode(compound)) != nil else { fatalError("RTCP JSON encoding failed") }
}

/// Drives the reception statistics with input-chosen sequence numbers and times.
private func exerciseReceptionState(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return }
    var state = RTPSourceState(firstSequenceNumber: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
    var unwrapper = SequenceNumberUnwrapper()
    var jitter = RTPJitterEstimator()
    var index = 2
    while index + 1 < bytes.count {
        let sequence = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
        state.update(sequenceNumber: sequence)
        _ = unwrapper.unwrap(sequence)
        jitter.update(arrivalTime: UInt32(sequence) &* 160 &+ UInt32(bytes[index]), rtpTimestamp: UInt32(sequence) &* 160)
        if bytes[index] & 0x0f == 0 {
            let report = state.makeReceptionReport()
            if report.expectedInInterval == 0, report.fractionLost != 0 { fatalError("fraction lost without expected packets") }
        }
        index += 2
    }
    _ = jitter.jitter
}
