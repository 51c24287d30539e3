import Foundation
import Testing
import ParleyRTP

@Suite("JSON form for parley inspect")
struct JSONTests {
    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("RTP packet with one-byte extension")
    func rtp() throws {
        let packet = try RTPPacket(parsing: Sample.bytes(Sample.rtpOpusOneByteExtension))
        #expect(try json(packet) == """
            {"csrcCount":0,"csrcs":[],"extension":true,"headerExtension":{"appBits":null,"data":"10aa3100054030\
            00","elements":[{"data":"aa","id":1},{"data":"0005","id":3},{"data":"30","id":4}],"elementsError":null,\
            "form":"oneByte","profile":48862},"marker":false,"padding":false,"paddingBytes":"","payload":"780be4c1\
            36ecc58d8c494699","payloadSize":12,"payloadType":111,"sequenceNumber":18971,"ssrc":1328157084,\
            "timestamp":1547599104,"version":2}
            """)
    }

    @Test("RTP packet without extension, with padding; malformed elements give elementsError")
    func rtpVariants() throws {
        let padded = try RTPPacket(parsing: Sample.bytes(Sample.rtpCSRCPadding))
        let text = try json(padded)
        #expect(text.contains("\"headerExtension\":null"))
        #expect(text.contains("\"paddingBytes\":\"000003\""))
        #expect(text.contains("\"csrcs\":[286331153,572662306]"))
        var bytes = Sample.bytes(Sample.rtpOpusOneByteExtension)
        bytes[16] = 0x1f
        let broken = try json(RTPPacket(parsing: bytes))
        #expect(broken.contains("\"elements\":null"))
        #expect(broken.contains("\"elementsError\":\"truncated one-byte extension element 1 at offset 1: need 16 bytes, 7 left\""))
    }

    @Test("RTCP compound: SR + SDES")
    func rtcp() throws {
        let compound = try RTCPCompoundPacket(parsing: Sample.bytes(Sample.rtcpChromiumSRSDES))
        #expect(try json(compound) == """
            {"packets":[{"ntpTimestamp":{"compact":1282509373,"fraction":2319282339,"seconds":3920841841},\
            "octetCount":80000,"packetCount":500,"packetType":200,"profileExtension":"","reportBlocks":[\
            {"cumulativeLost":12,"delaySinceLastSenderReport":32768,"extendedHighestSequenceNumber":84523,\
            "fractionLost":5,"jitter":35,"lastSenderReport":1282471362,"ssrc":2585472061}],"rtpTimestamp":1547602496,\
            "ssrc":1328157084,"type":"senderReport"},{"chunks":[{"items":[{"prefix":null,"text":"k4n5Xp2v3QWe0LZs",\
            "type":"CNAME","typeCode":1,"value":"6b346e35587032763351576530 4c5a73"}],"ssrc":1328157084}],\
            "packetType":202,"type":"sourceDescription"}],"padding":""}
            """.replacingOccurrences(of: " ", with: ""))
    }

    @Test("RTCP feedback, BYE, APP, unknown")
    func rtcpOthers() throws {
        let feedback = try json(RTCPCompoundPacket(parsing: Sample.bytes(Sample.rtcpFeedback)))
        #expect(feedback.contains("""
            {"decoded":{"entries":[{"blp":5,"lostSequenceNumbers":[300,301,303],"pid":300}],"kind":"genericNACK"},\
            "feedbackControlInformation":"012c0005","format":1,"mediaSSRC":2,"packetType":205,"senderSSRC":1,\
            "type":"transportFeedback"}
            """))
        #expect(feedback.contains("{\"decoded\":{\"kind\":\"pictureLossIndication\"}"))
        #expect(feedback.contains("\"cumulativeLost\":-3"))
        let bye = try json(RTCPCompoundPacket(parsing: Sample.bytes(Sample.rtcpRRByePadded)))
        #expect(bye.contains("{\"packetType\":203,\"reason\":\"627965\",\"reasonText\":\"bye\",\"ssrcs\":[3735928559],\"type\":\"goodbye\"}"))
        #expect(bye.hasSuffix("\"padding\":\"00000004\"}"))
        let others = try json(RTCPCompoundPacket(parsing: Sample.bytes(Sample.rtcpSDESAppXR)))
        #expect(others.contains("{\"data\":\"deadbeef\",\"name\":\"50524c59\",\"nameText\":\"PRLY\",\"packetType\":204,\"ssrc\":17,\"subtype\":2,\"type\":\"applicationDefined\"}"))
        #expect(others.contains("{\"body\":\"0000001104000000\",\"count\":0,\"packetType\":207,\"type\":\"unknown\"}"))
        #expect(others.contains("{\"prefix\":\"78\",\"text\":\"yz\",\"type\":\"PRIV\",\"typeCode\":8,\"value\":\"0178797a\"}"))
    }

    @Test("Telephone event")
    func telephoneEvent() throws {
        #expect(try json(TelephoneEvent(event: 11, isEnd: true, volume: 7, duration: 320))
            == "{\"duration\":320,\"end\":true,\"event\":11,\"key\":\"#\",\"reserved\":false,\"volume\":7}")
        #expect(try json(TelephoneEvent(event: 16, duration: 0)).contains("\"key\":null"))
    }
}
