import Foundation

/// A TLS front for a SIPp peer (or a test backend): `socat` takes a TLS connection on a loopback port with
/// the given certificate and relays its decrypted bytes to SIPp's TCP port, so SIPp
/// (Debian's build has no TLS) is a SIP over TLS endpoint. The front's port is chosen
/// first, for SIPp's scenario to name it in its Contact.
final class TLSFront: @unchecked Sendable {
    // Used from one test's thread; ManagedProcess synchronises itself.
    let process: ManagedProcess
    let port: UInt16

    /// Starts relaying `port` to `target` and waits until socat listens; with
    /// `manyConnections` it takes any number of connections (one child each), as an HTTPS
    /// front must.
    init(port: UInt16, certificate: String, key: String, forwardingTo target: UInt16, manyConnections: Bool = false) throws {
        self.port = port
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("socat") }
        guard let socat = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ManagedProcess.Failure(description: "socat is not installed: scripts/install-deps.sh installs it")
        }
        process = try ManagedProcess(
            name: "socat TLS front", executable: socat,
            arguments: ["-d", "-d", "OPENSSL-LISTEN:\(port),bind=127.0.0.1,reuseaddr,cert=\(certificate),key=\(key),verify=0"
                            + (manyConnections ? ",fork" : ""),
                        "TCP:127.0.0.1:\(target)"])
        let deadline = Date().addingTimeInterval(10)
        while !process.errorText.contains("listening on") {
            guard process.isRunning, Date() < deadline else {
                throw ManagedProcess.Failure(description: "socat did not listen\n" + process.report)
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    deinit { process.killHard() }
}
