@testable import ParleyDaemon
import ParleyServer
import ParleySIP
import ParleySIPCore
import Testing

/// The SIP gateway's settings (`--sip-trunk`, `--sip-route`...) in their spellings, and their rules.
@Suite struct DaemonSIPGatewayConfigurationTests {
    struct NoFile: Error {}

    private func parse(_ arguments: [String], environment: [String: String] = [:],
                       files: [String: String] = [:]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: environment) { path in
            guard let text = files[path] else { throw NoFile() }
            return text
        }
    }

    private func gateway(_ arguments: [String], environment: [String: String] = [:],
                         files: [String: String] = [:]) throws -> SIPGatewayConfiguration? {
        guard case .serve(let configuration) = try parse(arguments, environment: environment, files: files).get() else {
            throw NoFile()
        }
        return configuration.sipGateway
    }

    @Test func withoutGatewaySettingsThereIsNoGateway() throws {
        #expect(try gateway(["--sip-listen", "127.0.0.1:5060"]) == nil)
    }

    @Test func flagsBuildTheTrunkRoutesProxyAndDirectDialling() throws {
        let gateway = try #require(try gateway(
            ["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "sip:192.0.2.1:5070;transport=tcp", "--sip-trunk-domain", "carrier.example",
             "--sip-trunk-user", "acct", "--sip-trunk-password-file", "/secret", "--sip-trunk-number-format", "digits",
             "--sip-route", "PBX.example=192.0.2.2:5080", "--sip-route", "lab.example=[::1]:5090",
             "--sip-outbound-proxy", "192.0.2.3:5060", "--sip-allow-direct", "--sip-advertised-host", "sip.parley.example",
             "--sip-max-calls", "50"],
            files: ["/secret": "s3cret\r\n"]))
        let trunk = try #require(gateway.trunk)
        #expect(trunk.hop == SIPHop(transport: .tcp, host: .ipv4("192.0.2.1"), port: 5070))
        #expect(trunk.domain == "carrier.example" && trunk.uriHost == "carrier.example")
        #expect(trunk.username == "acct" && trunk.password == "s3cret")
        #expect(trunk.numberFormat == .digits)
        #expect(gateway.routes == ["pbx.example": SIPHop(transport: .udp, host: .ipv4("192.0.2.2"), port: 5080),
                                   "lab.example": SIPHop(transport: .udp, host: .ipv6("::1"), port: 5090)])
        #expect(gateway.outboundProxy == SIPHop(transport: .udp, host: .ipv4("192.0.2.3"), port: 5060))
        #expect(gateway.allowDirect)
        #expect(gateway.advertisedHost == "sip.parley.example")
        #expect(gateway.maxCalls == 50)
    }

    @Test func sipOverTLSHasItsListenerCertificateAndCAAndItsHops() throws {
        guard case .serve(let configuration) = try parse(
            ["--sip-listen", "127.0.0.1:5060", "--sip-tls-listen", "127.0.0.1:5061", "--sip-tls-cert", "/etc/parley/sip.pem",
             "--sip-tls-key", "/etc/parley/sip.key", "--sip-tls-ca-file", "/etc/parley/trunks.pem",
             "--sip-trunk", "sips:192.0.2.1:5061", "--sip-trunk-domain", "carrier.example",
             "--sip-route", "pbx.example=192.0.2.2:5071;transport=TLS", "--sip-outbound-proxy", "sip:192.0.2.3:5060;transport=tcp"]).get()
        else {
            Issue.record("not a serve command")
            return
        }
        #expect(configuration.sipTLSListenAddress == .ipv4Loopback(port: 5061))
        #expect(configuration.sipTLSCertificateFile == "/etc/parley/sip.pem" && configuration.sipTLSKeyFile == "/etc/parley/sip.key")
        #expect(configuration.sipTLSCAFile == "/etc/parley/trunks.pem")
        let gateway = try #require(configuration.sipGateway)
        #expect(gateway.trunk?.hop == SIPHop(transport: .tls, host: .ipv4("192.0.2.1"), port: 5061))
        #expect(gateway.routes["pbx.example"] == SIPHop(transport: .tls, host: .ipv4("192.0.2.2"), port: 5071))
        #expect(gateway.outboundProxy?.transport == .tcp)
        // The same from the JSON file, without a CA file: the system's CAs.
        guard case .serve(let fromFile) = try parse(
            ["--config", "/c.json"],
            files: ["/c.json": #"{"sipListen": "127.0.0.1:5060", "sipTlsListen": "127.0.0.1:5061", "sipTlsCert": "/c.pem", "sipTlsKey": "/k.pem"}"#]).get()
        else {
            Issue.record("not a serve command")
            return
        }
        #expect(fromFile.sipTLSListenAddress?.port == 5061 && fromFile.sipTLSCertificateFile == "/c.pem" && fromFile.sipTLSCAFile == nil)
        #expect(fromFile.sipGateway == nil)
    }

    @Test func sdesOnSIPMediaLegsIsOffOrAskedFor() throws {
        guard case .serve(let plain) = try parse(["--sip-listen", "127.0.0.1:5060"]).get(),
              case .serve(let sdes) = try parse(["--sip-listen", "127.0.0.1:5060", "--sip-media-sdes"]).get(),
              case .serve(let fromEnvironment) = try parse([], environment: ["PARLEY_SIP_MEDIA_SDES": "yes"]).get() else {
            Issue.record("not serve")
            return
        }
        #expect(!plain.sipMediaOffersSDES && sdes.sipMediaOffersSDES && fromEnvironment.sipMediaOffersSDES)
    }

    @Test func environmentAndFileSpellings() throws {
        let fromEnvironment = try #require(try gateway(
            [], environment: ["PARLEY_SIP_LISTEN": "127.0.0.1:5060", "PARLEY_SIP_ROUTE": "a.example=192.0.2.2:5080, b.example=192.0.2.4:5080"]))
        #expect(fromEnvironment.routes.count == 2)
        let fromFile = try #require(try gateway(
            ["--config", "/c.json"],
            files: ["/c.json": #"{"sipListen": "127.0.0.1:5060", "sipTrunk": "192.0.2.1:5060", "sipRoute": ["a.example=192.0.2.2:5080"], "sipAllowDirect": true}"#]))
        #expect(fromFile.trunk?.hop.port == 5060 && fromFile.routes.count == 1 && fromFile.allowDirect)
        let withPassword = try #require(try gateway(
            ["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "sip:127.0.0.1:5070;transport=udp", "--sip-trunk-user", "acct"],
            environment: ["PARLEY_SIP_TRUNK_PASSWORD": "pw"]))
        #expect(withPassword.trunk?.password == "pw" && withPassword.trunk?.hop.transport == .udp)
    }

    @Test(arguments: [
        (["--sip-trunk", "192.0.2.1:5070"], "calls through SIP (--sip-trunk, --sip-route, --sip-outbound-proxy, --sip-allow-direct) need --sip-listen"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "carrier.example:5060"],
         #"--sip-trunk: "carrier.example:5060" is not [sip:]IP:PORT (names are not looked up; IPv6 as [::1]:5060)"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "192.0.2.1:5061;transport=tls"],
         "a SIP hop over TLS (tls:192.0.2.1:5061) needs --sip-tls-listen, --sip-tls-cert and --sip-tls-key"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-route", "a.example=sips:192.0.2.2:5061"],
         "a SIP hop over TLS (tls:192.0.2.2:5061) needs --sip-tls-listen, --sip-tls-cert and --sip-tls-key"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "192.0.2.1:5061;transport=sctp"],
         #"--sip-trunk: "192.0.2.1:5061;transport=sctp": the only parameter is ;transport=udp, tcp or tls"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "sips:192.0.2.1:5061;transport=udp"],
         #"--sip-trunk: "sips:192.0.2.1:5061;transport=udp": a sips: address goes over TLS only"#),
        (["--sip-tls-listen", "127.0.0.1:5061", "--sip-tls-cert", "/c.pem", "--sip-tls-key", "/k.pem"], "--sip-tls-listen needs --sip-listen"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-tls-listen", "127.0.0.1:5061"],
         "--sip-tls-listen, --sip-tls-cert and --sip-tls-key go together: give all three or none"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-tls-listen", "127.0.0.1:5060", "--sip-tls-cert", "/c.pem", "--sip-tls-key", "/k.pem"],
         "--sip-tls-listen: 127.0.0.1:5060 is also the --sip-listen address or an HTTP listen address"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-tls-ca-file", "/ca.pem"], "--sip-tls-ca-file needs --sip-tls-listen"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-tls-listen", "127.0.0.1:5061", "--sip-tls-cert", "", "--sip-tls-key", "/k.pem"],
         "--sip-tls-cert, --sip-tls-key and --sip-tls-ca-file must name files"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-route", "192.0.2.2:5080"], #"--sip-route: "192.0.2.2:5080" is not DOMAIN=IP:PORT"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-route", "a.example=192.0.2.2:5080", "--sip-route", "A.example=192.0.2.3:5080"],
         "--sip-route: a.example is routed more than once"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk-user", "acct"], "--sip-trunk-user needs --sip-trunk"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "192.0.2.1:5070", "--sip-trunk-password", "x"], "a trunk password needs --sip-trunk-user"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "192.0.2.1:5070", "--sip-trunk-user", "a", "--sip-trunk-password", "x",
          "--sip-trunk-password-file", "/secret"], "--sip-trunk-password-file: give the password or a file holding it, not both"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "192.0.2.1:5070", "--sip-trunk-number-format", "national"],
         #"--sip-trunk-number-format: "national" is not a number format (e164, digits)"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-trunk", "192.0.2.1:5070", "--sip-trunk-user", "a", "--sip-trunk-password-file", "/missing"],
         "--sip-trunk-password-file: cannot read /missing: NoFile()"),
    ])
    func badGatewaySettingsAreOneClearLine(arguments: [String], message: String) {
        guard case .failure(let error) = parse(arguments) else {
            Issue.record("\(arguments) was accepted")
            return
        }
        #expect(error.message == message)
    }

    @Test func sipPeersComeFromTheirFile() throws {
        let file = "# peers\npbx1:s3cret\r\n\nlab:pass:with:colons\n"
        let gateway = try #require(try gateway(["--sip-listen", "127.0.0.1:5060", "--sip-peers-file", "/peers", "--sip-peer-realm", "pbx.example"],
                                               files: ["/peers": file]))
        #expect(gateway.peers == ["pbx1": "s3cret", "lab": "pass:with:colons"])
        #expect(gateway.peerRealm == "pbx.example")
        #expect(gateway.peerAlgorithms == [.md5])
        #expect(try self.gateway(["--sip-listen", "127.0.0.1:5060", "--sip-peers-file", "/peers", "--sip-peer-algorithms", "sha256, MD5"],
                                 files: ["/peers": file])?.peerAlgorithms == [.sha256, .md5])
        #expect(try self.gateway(["--sip-listen", "127.0.0.1:5060", "--sip-peers-file", "/peers"], files: ["/peers": file])?.peerRealm == "parley")

        for (text, message) in [
            ("pbx1\n", "--sip-peers-file (/peers) line 1: expected USER:PASSWORD"),
            ("pbx1:a\npbx1:b\n", "--sip-peers-file (/peers) line 2: pbx1 is given twice"),
            (":nouser\n", "--sip-peers-file (/peers) line 1: the user must be 1 to 64 visible characters"),
            ("pbx1:\n", "--sip-peers-file (/peers) line 1: the password must be 1 to 256 bytes"),
            ("# nobody\n", "--sip-peers-file (/peers): no USER:PASSWORD line"),
        ] {
            guard case .failure(let error) = parse(["--sip-listen", "127.0.0.1:5060", "--sip-peers-file", "/peers"], files: ["/peers": text]) else {
                Issue.record("\(text) was accepted")
                continue
            }
            #expect(error.message == message)
        }
        guard case .failure(let error) = parse(["--sip-listen", "127.0.0.1:5060", "--sip-peer-realm", "x"]) else {
            Issue.record("a realm without peers was accepted")
            return
        }
        #expect(error.message == "--sip-peer-realm needs --sip-peers-file")
    }
}
