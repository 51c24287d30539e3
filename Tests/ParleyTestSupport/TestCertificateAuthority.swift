import Foundation

/// Throwaway certificates for TLS tests, made once per test process with the `openssl`
/// command in a temporary directory: a trusted CA, a server certificate it signed for
/// `localhost`, `127.0.0.1` and `::1`, an expired one with the same names, and one signed
/// by a second CA the tests never trust.
public struct TestCertificateAuthority: Sendable {
    /// The directory holding every file.
    public let directory: String
    /// The trusted CA's certificate (give it to clients as their CA file).
    public var caFile: String { directory + "/ca.pem" }
    /// The server certificate chain and key (valid for localhost, 127.0.0.1, ::1).
    public var serverCertificateFile: String { directory + "/server.pem" }
    public var serverKeyFile: String { directory + "/server.key" }
    /// Same names and CA, but valid only during 2020.
    public var expiredCertificateFile: String { directory + "/expired.pem" }
    public var expiredKeyFile: String { directory + "/expired.key" }
    /// Same names, signed by a CA nobody trusts.
    public var untrustedCertificateFile: String { directory + "/untrusted.pem" }
    public var untrustedKeyFile: String { directory + "/untrusted.key" }

    /// The certificates of this process (made on first use). Throws when `openssl` fails.
    public static func shared() throws -> TestCertificateAuthority {
        try cached.get()
    }

    private static let cached: Result<TestCertificateAuthority, any Error> = Result { try TestCertificateAuthority() }

    private init() throws {
        let dir = NSTemporaryDirectory() + "parley-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        directory = dir
        let names = "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
        try names.write(toFile: dir + "/leaf.ext", atomically: true, encoding: .utf8)
        let ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        for ca in ["ca", "rogue"] {
            try Self.openssl(["req", "-x509"] + ecKey + ["-keyout", "\(dir)/\(ca).key", "-out", "\(dir)/\(ca).pem",
                                                          "-days", "2", "-subj", "/CN=Parley test \(ca)"])
        }
        for (leaf, ca) in [("server", "ca"), ("untrusted", "rogue"), ("expired", "ca")] {
            try Self.openssl(["req"] + ecKey + ["-keyout", "\(dir)/\(leaf).key", "-out", "\(dir)/\(leaf).csr", "-subj", "/CN=localhost"])
            if leaf == "expired" {
                // `openssl x509` cannot back-date; `openssl ca` takes explicit dates.
                let config = """
                    [ca]
                    default_ca = test
                    [test]
                    database = \(dir)/index.txt
                    new_certs_dir = \(dir)
                    serial = \(dir)/serial
                    default_md = sha256
                    policy = any
                    unique_subject = no
                    [any]
                    commonName = supplied
                    [leaf]
                    subjectAltName = DNS:localhost,IP:127.0.0.1,IP:::1
                    basicConstraints = CA:FALSE
                    extendedKeyUsage = serverAuth

                    """
                try config.write(toFile: dir + "/ca.cnf", atomically: true, encoding: .utf8)
                try "".write(toFile: dir + "/index.txt", atomically: true, encoding: .utf8)
                try "1000\n".write(toFile: dir + "/serial", atomically: true, encoding: .utf8)
                try Self.openssl(["ca", "-batch", "-config", "\(dir)/ca.cnf", "-cert", "\(dir)/ca.pem", "-keyfile", "\(dir)/ca.key",
                                  "-in", "\(dir)/expired.csr", "-out", "\(dir)/expired.pem", "-extensions", "leaf",
                                  "-startdate", "20200101000000Z", "-enddate", "20201231000000Z", "-notext"])
            } else {
                try Self.openssl(["x509", "-req", "-in", "\(dir)/\(leaf).csr", "-CA", "\(dir)/\(ca).pem", "-CAkey", "\(dir)/\(ca).key",
                                  "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", "2",
                                  "-extfile", "\(dir)/leaf.ext", "-out", "\(dir)/\(leaf).pem"])
            }
        }
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestCertificateError(message: "openssl \(arguments.first ?? "") failed: " + String(decoding: message, as: UTF8.self))
        }
    }
}

/// `openssl` could not make a test certificate.
public struct TestCertificateError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
