import Glibc

// parleyd bridging SIP to SIP (the `bridge` row of the `sip` group, docs/bench-sip.md): a
// SIPp uac calls one of the application's numbers, whose rule bridges it to
// `bob@pbx.test`, routed to a SIPp uas. Per call parleyd runs a call in (100, 180, 200
// with its answer, ACK, BYE), a call out (INVITE, ACK, BYE, their answers), two plain RTP
// legs in a gateway, the call core and a SQLite record, at rising call rates beside
// Kamailio's proxy row.

/// parleyd as the server under the uac's load: its SIP address and the number it bridges.
final class BridgingServer: SIPServerUnderLoad {
    /// The number the uac dials; its rule bridges it to `bob@pbx.test`.
    static let number = "46700000090"
    let server: ServerUnderTest
    let sipPort: UInt16

    /// A parleyd routing `pbx.test` to `uas`, with `number` bridged there, its application
    /// allowed SIP addresses, and no per-source request limit in the way of the uac.
    init(uas: SIPpProcess) throws {
        let port = try freeLoopbackPort()
        sipPort = port
        server = try ServerUnderTest(
            extraArguments: ["--sip-listen", "127.0.0.1:\(port)", "--sip-route", "pbx.test=\(uas.address)",
                             "--sip-requests-per-second", "1000000", "--sip-request-burst", "1000000", "--max-calls-per-app", "100000"],
            applicationSettings: [["set-dialling", "--sip", "on"]],
            applicationArguments: { key in ["--sip-number", "+\(Self.number)=\(key):sip:bob@pbx.test"] })
    }

    var sipAddress: String { "127.0.0.1:\(sipPort)" }
    var dialledUser: String? { Self.number }
    func cpuSeconds() -> Double { server.cpuSeconds() }
    func stop() { server.stop() }
}
