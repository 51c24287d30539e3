import Foundation

/// Certificates for the SIP over TLS gateway tests, made once per test process with the
/// `openssl` command in a temporary directory: a CA parleyd is told to trust
/// (`--sip-tls-ca-file`), the far side's certificate for `pbx.test` and 127.0.0.1 (the
/// route's domain and address), and one from the same CA for another name.
struct SIPTLSCertificates: Sendable {
    let directory: String
    /// The CA's certificate.
    var caFile: String { directory + "/ca.pem" }
    /// For `pbx.test` and 127.0.0.1 (also what parleyd presents on its own TLS port).
    var pbxCertificateFile: String { directory + "/pbx.pem" }
    var pbxKeyFile: String { directory + "/pbx.key" }
    /// For `other.test` only: trusted, but not the name a call to pbx.test checks.
    var otherCertificateFile: String { directory + "/other.pem" }
    var otherKeyFile: String { directory + "/other.key" }

    /// The certificates of this process (made on first use); throws when `openssl` fails.
    static func shared() throws -> SIPTLSCertificates { try cached.get() }

    private static let cached: Result<SIPTLSCertificates, any Error> = Result { try SIPTLSCertificates() }

    private init() throws {
        directory = NSTemporaryDirectory() + "parley-sip-tls-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try Self.openssl(["req", "-x509"] + key + ["-keyout", "\(directory)/ca.key", "-out", caFile, "-days", "2",
                                                    "-subj", "/CN=Parley SIP test CA"])
        for (leaf, names) in [("pbx", "DNS:pbx.test,IP:127.0.0.1"), ("other", "DNS:other.test")] {
            let extensions = "subjectAltName=\(names)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            try extensions.write(toFile: "\(directory)/\(leaf).ext", atomically: true, encoding: .utf8)
            try Self.openssl(["req"] + key + ["-keyout", "\(directory)/\(leaf).key", "-out", "\(directory)/\(leaf).csr",
                                              "-subj", "/CN=\(leaf).test"])
            try Self.openssl(["x509", "-req", "-in", "\(directory)/\(leaf).csr", "-CA", caFile, "-CAkey", "\(directory)/ca.key",
                              "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "2",
                              "-extfile", "\(directory)/\(leaf).ext", "-out", "\(directory)/\(leaf).pem"])
        }
    }

    private static func openssl(_ arguments: [String]) throws {
        let run = try ManagedProcess(name: "openssl \(arguments.first ?? "")", executable: URL(fileURLWithPath: "/usr/bin/openssl"),
                                     arguments: arguments)
        guard try run.waitForExit(timeout: 20) == 0 else {
            throw ManagedProcess.Failure(description: "openssl failed\n" + run.report)
        }
    }
}
