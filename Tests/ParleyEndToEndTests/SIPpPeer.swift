import Foundation

/// SIPp (Debian's sip-tester) as the far side of a gateway call: a UAS on a free loopback
/// port running a scenario of scripts/sipp/ (or SIPp's built-in `uas`), its RTP port free
/// too, optionally echoing what RTP it receives (`-rtp_echo`), for `calls` calls.
final class SIPpPeer: @unchecked Sendable {
    // Used from one test's thread; ManagedProcess synchronises itself.
    let process: ManagedProcess
    let port: UInt16
    let mediaPort: UInt16
    let errors: URL

    /// - Parameters:
    ///   - scenario: a file name in scripts/sipp/ (without `.xml`), or nil for SIPp's `uas`.
    ///   - workingDirectory: where SIPp runs (it reads a scenario's `play_pcap_audio` file
    ///     relative to it); nil for the test's own.
    init(scenario: String? = nil, echo: Bool = false, calls: Int = 1, transport: String = "u1", extra: [String] = [],
         workingDirectory: URL? = nil) throws {
        port = try ParleydInstance.freeLoopbackPort()
        var media = try ParleydInstance.freeLoopbackPort()
        // SIPp takes the RTP port and the one after it (RTCP): both should be free.
        while media == port || media &+ 1 == port { media = try ParleydInstance.freeLoopbackPort() }
        mediaPort = media
        errors = FileManager.default.temporaryDirectory.appendingPathComponent("parley-sipp-\(UUID().uuidString).log")
        let scenarioArguments = scenario.map {
            ["-sf", SIPTestTools.repository.appendingPathComponent("scripts/sipp/\($0).xml").path]
        } ?? ["-sn", "uas"]
        let sipp = try SIPTestTools.sipp()
        // coreutils' env changes directory first (`-C`): ManagedProcess starts in the test's.
        let launcher = workingDirectory.map { ["-C", $0.path, sipp.path] } ?? []
        process = try ManagedProcess(
            name: "sipp \(scenario ?? "uas")", executable: workingDirectory == nil ? sipp : URL(fileURLWithPath: "/usr/bin/env"),
            arguments: launcher + scenarioArguments + ["-i", "127.0.0.1", "-p", String(port), "-mp", String(media), "-t", transport,
                                            "-m", String(calls), "-timeout", "60", "-timeout_error", "-nostdin", "-trace_err",
                                            "-error_file", errors.path] + (echo ? ["-rtp_echo"] : []) + extra)
    }

    deinit {
        process.killHard()
        try? FileManager.default.removeItem(at: errors)
    }

    /// `127.0.0.1:PORT`, for `--sip-route DOMAIN=...` and `--sip-trunk`.
    var address: String { "127.0.0.1:\(port)" }

    /// Waits for SIPp to finish its calls: 0 when every one went as its scenario says.
    func waitForExit(timeout: Double) throws -> Int32 { try process.waitForExit(timeout: timeout) }

    /// What SIPp printed and its error log, for a failed expectation.
    var report: String { process.report + "\n--- SIPp errors:\n" + ((try? String(contentsOf: errors, encoding: .utf8)) ?? "") }
}
