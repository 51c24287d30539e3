import ParleySIP
import ParleySIPCore
import Testing

/// DTMF in SIP INFO bodies.
@Suite struct SIPDTMFInfoTests {
    static let relay = try! SIPContentType(type: "application", subtype: "dtmf-relay")
    static let dtmf = try! SIPContentType(type: "application", subtype: "dtmf")

    @Test func signalLinesAndBareDigitsAreRead() {
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array("Signal=5\r\nDuration=160\r\n".utf8)) == "5")
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array("signal = #\nDuration=100".utf8)) == "#")
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array("Signal=10\r\n".utf8)) == "*")
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array("Signal=d\r\n".utf8)) == "D")
        #expect(SIPDTMFInfo.key(contentType: Self.dtmf, body: Array("7".utf8)) == "7")
    }

    @Test func anythingElseIsNotDTMF() {
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array("Signal=Z\r\n".utf8)) == nil)
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array("Duration=160\r\n".utf8)) == nil)
        #expect(SIPDTMFInfo.key(contentType: .sdp, body: Array("Signal=5".utf8)) == nil)
        #expect(SIPDTMFInfo.key(contentType: nil, body: Array("5".utf8)) == nil)
        #expect(SIPDTMFInfo.key(contentType: Self.relay, body: Array(repeating: 0x35, count: 5000)) == nil)
    }
}
