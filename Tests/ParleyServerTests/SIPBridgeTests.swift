import ParleyCallCore
import ParleyCallModel
@testable import ParleyServer
import ParleySignaling
import Testing

/// The server's part of a bridge's ends (docs/sip.md, "Bridged calls"): the final status
/// its SIP caller gets for each way the call out ends.
@Suite("SIP bridges in the server")
struct SIPBridgeTests {
    @Test("Busy, no answer and cancel keep their statuses; other failures of the call out pass on, hop-by-hop ones mapped")
    func callerStatuses() {
        #expect(SIPInboundAgent.status(for: .denied, error: nil) == (486, "Busy Here"))
        #expect(SIPInboundAgent.status(for: .noAnswer, error: nil) == (480, "Temporarily Unavailable"))
        #expect(SIPInboundAgent.status(for: .canceled, error: nil) == (487, "Request Terminated"))
        func passed(_ status: Int) -> Int {
            SIPInboundAgent.status(for: .error, error: SIPCallEvent.sipError(status: status, reason: "far side")).0
        }
        #expect(passed(404) == 404 && passed(488) == 488 && passed(484) == 484 && passed(604) == 604 && passed(502) == 502)
        #expect(passed(302) == 480)
        #expect(passed(401) == 503 && passed(407) == 503)
        #expect(passed(422) == 500 && passed(481) == 500 && passed(491) == 500 && passed(503) == 500)
        #expect(SIPInboundAgent.status(for: .error, error: .init(code: .destinationNotAllowed, message: "no")) == (403, "Forbidden"))
        #expect(SIPBridgeStatus.reasonPhrase(404) == "Not Found" && SIPBridgeStatus.reasonPhrase(499) == "Request Failed")
    }
}
