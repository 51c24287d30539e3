import Foundation
import ParleyNetCore
import ParleySIPIO
import Testing

/// `parleyd --sip-listen` as a SIP peer meets it: SIPp (Debian's sip-tester) pinging with
/// OPTIONS and calling in over UDP and TCP, every RFC 4475 and RFC 5118 message replayed
/// at it, and a flood of INVITEs from one source beside another caller. The scenarios are
/// in scripts/sipp/ (README.md there says what each checks).
@Suite struct EndToEndSIPTests {
    static let bannerPrefix = "parleyd listening for SIP on udp and tcp "

    /// A parleyd with SIP on a free loopback port, and that port's address (from the banner).
    static func parleyd(_ flags: [String] = []) throws -> (ParleydInstance, SocketAddress) {
        let instance = try ParleydInstance(flags: ["--sip-listen", "127.0.0.1:0"] + flags)
        let process = try #require(instance.process)
        let line = try process.waitForLine(timeout: 20, "'\(bannerPrefix)'") { $0.hasPrefix(bannerPrefix) }
        return (instance, try SocketAddress(parsing: String(line.dropFirst(bannerPrefix.count))))
    }

    static var repository: URL { SIPTestTools.repository }

    static func sipp() throws -> URL { try SIPTestTools.sipp() }

    @Test func sippPingsAndCallsOverUDPAndTCP() throws {
        let (instance, address) = try Self.parleyd()
        let sipp = try Self.sipp()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sipp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for transport in ["u1", "t1"] {
            for scenario in ["options", "invite-refused"] {
                let errors = scratch.appendingPathComponent("\(scenario)-\(transport)-errors.log")
                let run = try ManagedProcess(
                    name: "sipp \(scenario) -t \(transport)", executable: sipp,
                    arguments: ["-sf", Self.repository.appendingPathComponent("scripts/sipp/\(scenario).xml").path,
                                "-m", "3", "-t", transport, "-i", "127.0.0.1", "-p", String(try ParleydInstance.freeLoopbackPort()),
                                "-timeout", "20", "-timeout_error", "-nostdin", "-trace_err", "-error_file", errors.path,
                                address.description])
                let status = try run.waitForExit(timeout: 40)
                let log = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                #expect(status == 0, "\(run.report)\n--- SIPp errors:\n\(log)")
            }
        }
        #expect(instance.process?.isRunning == true)
    }

    @Test func everyTortureMessageAgainstParleyd() throws {
        // The messages' Vias name other hosts: answers go to the packet's source only with
        // rport forced. Many requests in a burst from one source: a limit out of the way.
        let (instance, address) = try Self.parleyd(["--sip-force-rport", "--sip-requests-per-second", "100000",
                                                    "--sip-request-burst", "100000"])
        try SIPTortureReplay.replayOverUDP(to: address)
        try SIPTortureReplay.replayOverTCP(to: address)
        #expect(instance.process?.isRunning == true)
        #expect(try instance.get("/healthz").status == 200)
    }

    @Test func aFloodOfInvitesAgainstParleyd() throws {
        // parleyd's default limit: 50 requests/s and a burst of 100 per source.
        let (instance, address) = try Self.parleyd()
        try SIPInviteFlood.run(against: address, limit: SIPSourceRateLimit())
        #expect(instance.process?.isRunning == true)
    }
}
