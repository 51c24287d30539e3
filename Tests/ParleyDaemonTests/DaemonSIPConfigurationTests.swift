import ParleyNetCore
import ParleyServer
import Testing

@testable import ParleyDaemon

/// `--sip-listen` and the SIP rate limit in their three spellings, and their rules.
@Suite struct DaemonSIPConfigurationTests {
    struct NoFile: Error {}

    private func parse(_ arguments: [String], environment: [String: String] = [:],
                       files: [String: String] = [:]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: environment) { path in
            guard let text = files[path] else { throw NoFile() }
            return text
        }
    }

    private func configuration(_ arguments: [String], environment: [String: String] = [:],
                               files: [String: String] = [:]) throws -> ServerConfiguration {
        let result = parse(arguments, environment: environment, files: files)
        guard case .success(.serve(let configuration)) = result else {
            Issue.record("expected serve, got \(result)")
            throw NoFile()
        }
        return configuration
    }

    private func error(_ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]) -> String? {
        guard case .failure(let error) = parse(arguments, environment: environment, files: files) else { return nil }
        return error.message
    }

    @Test func offUnlessGiven() throws {
        let plain = try configuration([])
        #expect(plain.sipListenAddress == nil)
        #expect(plain.sipRequestsPerSecond == 50 && plain.sipRequestBurst == 100)
        #expect(!plain.sipForceReturnPort)
    }

    @Test func flagEnvironmentAndFileSetTheAddress() throws {
        #expect(try configuration(["--sip-listen", "127.0.0.1:5060"]).sipListenAddress == SocketAddress(ipv4: 127, 0, 0, 1, port: 5060))
        #expect(try configuration(["--sip-listen=[::1]:5070"]).sipListenAddress == (try SocketAddress(parsing: "[::1]:5070")))
        #expect(try configuration([], environment: ["PARLEY_SIP_LISTEN": "0.0.0.0:5060"]).sipListenAddress
                == SocketAddress.ipv4Any(port: 5060))
        let file = try configuration(["--config", "p.json"],
                                     files: ["p.json": #"{"sipListen": "127.0.0.1:5080", "sipRequestsPerSecond": 20, "sipRequestBurst": 40}"#])
        #expect(file.sipListenAddress == SocketAddress(ipv4: 127, 0, 0, 1, port: 5080))
        #expect(file.sipRequestsPerSecond == 20 && file.sipRequestBurst == 40)
        // A flag wins over the file.
        #expect(try configuration(["--config", "p.json", "--sip-listen", "127.0.0.1:5090"],
                                  files: ["p.json": #"{"sipListen": "127.0.0.1:5080"}"#]).sipListenAddress?.port == 5090)
        #expect(try configuration(["--sip-requests-per-second", "5", "--sip-request-burst", "7"]).sipRequestBurst == 7)
        #expect(try configuration(["--sip-force-rport"]).sipForceReturnPort)
        #expect(try configuration([], environment: ["PARLEY_SIP_FORCE_RPORT": "yes"]).sipForceReturnPort)
        #expect(try configuration(["--config", "p.json"], files: ["p.json": #"{"sipForceRport": true}"#]).sipForceReturnPort)
    }

    @Test func badValuesAreRefused() {
        #expect(error(["--sip-listen", "sip.example.com:5060"])
                == #"--sip-listen: "sip.example.com:5060" is not HOST:PORT with an IP address (IPv6 as [::1]:5060)"#)
        #expect(error(["--sip-listen", "127.0.0.1"]) != nil)
        #expect(error(["--sip-listen", "127.0.0.1:5060", "--sip-listen", "127.0.0.1:5061"]) == "--sip-listen is given more than once")
        #expect(error(["--listen", "127.0.0.1:5060", "--sip-listen", "127.0.0.1:5060"])
                == "--sip-listen: 127.0.0.1:5060 is also a listen address for HTTP")
        #expect(error(["--sip-requests-per-second", "0"]) == #"--sip-requests-per-second: "0" is not a whole number in 1...1000000"#)
        #expect(error(["--config", "p.json"], files: ["p.json": #"{"sipListen": 5060}"#]) != nil)
    }

    @Test func theBannerNamesTheSIPAddress() throws {
        let text = Serve.banner(addresses: [try SocketAddress(parsing: "127.0.0.1:8080")], developmentApplication: nil,
                                dataDirectory: "./.parley", sipAddress: try SocketAddress(parsing: "127.0.0.1:5060"))
        #expect(text.contains("parleyd listening for SIP on udp and tcp 127.0.0.1:5060\n"))
        let without = Serve.banner(addresses: [try SocketAddress(parsing: "127.0.0.1:8080")], developmentApplication: nil,
                                   dataDirectory: "./.parley")
        #expect(!without.contains("SIP"))
    }
}
