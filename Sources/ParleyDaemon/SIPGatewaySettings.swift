import ParleyNetCore
import ParleyServer
import ParleySIP
import ParleySIPCore

/// `parleyd serve`'s SIP over TLS and SIP gateway settings (docs/sip.md, "Transports" and
/// "Routing"): the TLS listener, its certificate and the CAs trunks are checked against;
/// the trunk for phone numbers, routes per SIP domain, the outbound proxy, direct dialling
/// and the host parleyd names itself by. Any of trunk, route, proxy or direct dialling
/// turns the gateway on; it needs `--sip-listen`, and a TLS hop needs `--sip-tls-listen`.
enum SIPGatewaySettings {
    /// The options, in the order `--help` lists them (after `sip-force-rport`).
    static let options: [ConfigurationOption] = [
        .init(name: "sip-tls-listen", kind: .text, valueName: "HOST:PORT", defaultText: "off",
              help: "SIP over TLS on this address (usually port 5061), in and out; needs --sip-listen, --sip-tls-cert, --sip-tls-key"),
        .init(name: "sip-tls-cert", kind: .text, valueName: "FILE", defaultText: "none",
              help: "PEM certificate chain presented on --sip-tls-listen (server certificate first)"),
        .init(name: "sip-tls-key", kind: .text, valueName: "FILE", defaultText: "none",
              help: "PEM private key (unencrypted) for --sip-tls-cert"),
        .init(name: "sip-tls-ca-file", kind: .text, valueName: "FILE", defaultText: "the system's CAs",
              help: "PEM CA certificates that TLS trunks' and peers' certificates must chain to"),
        .init(name: "sip-trunk", kind: .text, valueName: "URI", defaultText: "none",
              help: "SIP trunk that calls to phone numbers go through: sip:IP:PORT[;transport=tcp|tls] (or IP:PORT, sips:IP:PORT)"),
        .init(name: "sip-trunk-domain", kind: .text, valueName: "HOST", defaultText: "the trunk's IP",
              help: "host written in the trunk's Request-URI, From and P-Asserted-Identity; over TLS, its certificate's name"),
        .init(name: "sip-trunk-user", kind: .text, valueName: "NAME", defaultText: "none",
              help: "account answering the trunk's digest challenges (401/407)"),
        .init(name: "sip-trunk-password", kind: .text, valueName: "PASSWORD", defaultText: "none",
              help: "that account's password (visible to ps: prefer the file or the environment)"),
        .init(name: "sip-trunk-password-file", kind: .text, valueName: "FILE", defaultText: "none",
              help: "file holding that account's password (its first line), instead of --sip-trunk-password"),
        .init(name: "sip-trunk-number-format", kind: .text, valueName: "e164|digits", defaultText: "e164",
              help: "numbers as +4615550101 (e164) or 4615550101 (digits) toward the trunk"),
        .init(name: "sip-route", kind: .list, valueName: "DOMAIN=IP:PORT[;transport=tcp|tls]", defaultText: "none",
              help: "where calls to a SIP domain go (over TLS, checked for DOMAIN); repeatable; environment: comma-separated"),
        .init(name: "sip-outbound-proxy", kind: .text, valueName: "IP:PORT[;transport=tcp|tls]", defaultText: "none",
              help: "where calls to SIP domains without a route go"),
        .init(name: "sip-allow-direct", kind: .switchOn, valueName: "", defaultText: "off",
              help: "let calls to sip addresses whose host is an IP address go straight there"),
        .init(name: "sip-advertised-host", kind: .text, valueName: "HOST", defaultText: "the --sip-listen IP",
              help: "host parleyd writes in its Via and Contact (needed when --sip-listen is a wildcard)"),
        .init(name: "sip-max-calls", kind: .integer, valueName: "N", defaultText: "10000",
              help: "SIP calls in progress at once, at most, over the whole server"),
        .init(name: "sip-peers-file", kind: .text, valueName: "FILE", defaultText: "none",
              help: "SIP peers that may call in from any address with digest credentials: one USER:PASSWORD per line (# comments)"),
        .init(name: "sip-peer-realm", kind: .text, valueName: "REALM", defaultText: "parley",
              help: "realm of the digest challenges sent to --sip-peers-file peers"),
        .init(name: "sip-peer-algorithms", kind: .text, valueName: "LIST", defaultText: "md5",
              help: "digest algorithms offered to --sip-peers-file peers, preferred first (some phones fail on a SHA-256 challenge)"),
        .init(name: "sip-media-sdes", kind: .switchOn, valueName: "", defaultText: "off",
              help: "offer SRTP keyed by SDES (RTP/SAVP, a=crypto) on SIP media legs instead of plain RTP/AVP"),
    ]

    /// The gateway the settings describe, or nil when none of trunk, route, proxy or
    /// direct dialling is given.
    static func gateway(_ settings: DaemonCommandLine.SettingValues, readFile: (String) throws -> String) throws -> SIPGatewayConfiguration? {
        func one(_ name: String) -> (value: String, source: String)? {
            settings[name].map { ($0.values.last ?? "", $0.source) }
        }
        var gateway = SIPGatewayConfiguration()
        var enabled = false
        if let (value, source) = one("sip-trunk") {
            var trunk = SIPGatewayConfiguration.Trunk(hop: try hop(value, source))
            if let (domain, source) = one("sip-trunk-domain") {
                guard isHost(domain) else { throw DaemonUsageError("\(source): \"\(domain)\" is not a host name or IP address") }
                trunk.domain = domain
            }
            trunk.username = one("sip-trunk-user")?.value
            trunk.password = one("sip-trunk-password")?.value
            if let (path, source) = one("sip-trunk-password-file") {
                guard trunk.password == nil else {
                    throw DaemonUsageError("\(source): give the password or a file holding it, not both")
                }
                let text: String
                do { text = try readFile(path) } catch {
                    throw DaemonUsageError("\(source): cannot read \(path): \(error)")
                }
                // Split on any line break: "\r\n" is one Character, so splitting on "\n" alone
                // would keep it in the password.
                trunk.password = String(text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
            }
            if trunk.username == nil, trunk.password != nil {
                throw DaemonUsageError("a trunk password needs --sip-trunk-user")
            }
            if let (format, source) = one("sip-trunk-number-format") {
                guard let parsed = SIPGatewayConfiguration.Trunk.NumberFormat(rawValue: format) else {
                    throw DaemonUsageError("\(source): \"\(format)\" is not a number format (e164, digits)")
                }
                trunk.numberFormat = parsed
            }
            gateway.trunk = trunk
            enabled = true
        } else {
            for name in ["sip-trunk-domain", "sip-trunk-user", "sip-trunk-password", "sip-trunk-password-file", "sip-trunk-number-format"] {
                if let (_, source) = one(name) { throw DaemonUsageError("\(source) needs --sip-trunk") }
            }
        }
        if let setting = settings["sip-route"] {
            for text in setting.values {
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                    throw DaemonUsageError("\(setting.source): \"\(text)\" is not DOMAIN=IP:PORT")
                }
                let domain = String(text[..<equals]).lowercased()
                guard isHost(domain) else { throw DaemonUsageError("\(setting.source): \"\(domain)\" is not a domain") }
                guard gateway.routes[domain] == nil else {
                    throw DaemonUsageError("\(setting.source): \(domain) is routed more than once")
                }
                gateway.routes[domain] = try hop(String(text[text.index(after: equals)...]), setting.source)
            }
            enabled = enabled || !gateway.routes.isEmpty
        }
        if let (value, source) = one("sip-outbound-proxy") {
            gateway.outboundProxy = try hop(value, source)
            enabled = true
        }
        if let (value, source) = one("sip-allow-direct") {
            gateway.allowDirect = try DaemonCommandLine.boolean(value, source)
            enabled = enabled || gateway.allowDirect
        }
        if let (value, source) = one("sip-advertised-host") {
            guard isHost(value) else { throw DaemonUsageError("\(source): \"\(value)\" is not a host name or IP address") }
            gateway.advertisedHost = value
        }
        if let (value, source) = one("sip-max-calls") { gateway.maxCalls = try DaemonCommandLine.integer(value, source, 1...1_000_000) }
        if let (path, source) = one("sip-peers-file") {
            let text: String
            do { text = try readFile(path) } catch {
                throw DaemonUsageError("\(source): cannot read \(path): \(error)")
            }
            gateway.peers = try peers(text, source: "\(source) (\(path))")
            enabled = enabled || !gateway.peers.isEmpty
        }
        if let (realm, source) = one("sip-peer-realm") {
            guard !realm.isEmpty, realm.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else {
                throw DaemonUsageError("\(source): \"\(realm)\" is not a realm (visible ASCII without quotes)")
            }
            guard !gateway.peers.isEmpty else { throw DaemonUsageError("\(source) needs --sip-peers-file") }
            gateway.peerRealm = realm
        }
        if let (list, source) = one("sip-peer-algorithms") {
            var algorithms: [SIPDigestAlgorithm] = []
            for name in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
                let algorithm: SIPDigestAlgorithm
                switch name {
                case "md5": algorithm = .md5
                case "sha256", "sha-256": algorithm = .sha256
                default: throw DaemonUsageError("\(source): \"\(name)\" is not a digest algorithm (md5, sha256)")
                }
                guard !algorithms.contains(algorithm) else { throw DaemonUsageError("\(source): \(name) is given twice") }
                algorithms.append(algorithm)
            }
            guard !algorithms.isEmpty else { throw DaemonUsageError("\(source): name md5, sha256 or both") }
            guard !gateway.peers.isEmpty else { throw DaemonUsageError("\(source) needs --sip-peers-file") }
            gateway.peerAlgorithms = algorithms
        }
        return enabled ? gateway : nil
    }

    /// The peers of a `--sip-peers-file`: `USER:PASSWORD` per line, blank lines and lines
    /// starting with `#` skipped; a user is 1 to 64 visible characters without `:`, a
    /// password 1 to 256 bytes, each user once.
    static func peers(_ text: String, source: String) throws -> [String: String] {
        var peers: [String: String] = [:]
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else {
                throw DaemonUsageError("\(source) line \(index + 1): expected USER:PASSWORD")
            }
            let user = String(line[..<colon]), password = String(line[line.index(after: colon)...])
            guard !user.isEmpty, user.utf8.count <= 64, user.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else {
                throw DaemonUsageError("\(source) line \(index + 1): the user must be 1 to 64 visible characters")
            }
            guard !password.isEmpty, password.utf8.count <= 256 else {
                throw DaemonUsageError("\(source) line \(index + 1): the password must be 1 to 256 bytes")
            }
            guard peers[user] == nil else { throw DaemonUsageError("\(source) line \(index + 1): \(user) is given twice") }
            peers[user] = password
        }
        guard !peers.isEmpty else { throw DaemonUsageError("\(source): no USER:PASSWORD line") }
        return peers
    }

    /// `IP:PORT[;transport=udp|tcp|tls]` (IPv6 as `[::1]:5060`), or the same as a URI
    /// (`sip:IP:PORT;transport=udp`, `sips:IP:PORT` for TLS): names are not resolved.
    static func hop(_ text: String, _ source: String) throws -> SIPHop {
        let lowered = text.lowercased()
        let secure = lowered.hasPrefix("sips:")
        let bare = secure ? String(text.dropFirst(5)) : lowered.hasPrefix("sip:") ? String(text.dropFirst(4)) : text
        var address = Substring(bare)
        var transport = secure ? SIPHop.Transport.tls : .udp
        if let semicolon = bare.firstIndex(of: ";") {
            address = bare[..<semicolon]
            let parameter = bare[bare.index(after: semicolon)...].lowercased()
            guard parameter.hasPrefix("transport="),
                  let named = SIPHop.Transport(name: String(parameter.dropFirst("transport=".count))) else {
                throw DaemonUsageError("\(source): \"\(text)\": the only parameter is ;transport=udp, tcp or tls")
            }
            guard !secure || named == .tls else {
                throw DaemonUsageError("\(source): \"\(text)\": a sips: address goes over TLS only")
            }
            transport = named
        }
        let socket: SocketAddress
        do { socket = try SocketAddress(parsing: String(address)) } catch {
            throw DaemonUsageError("\(source): \"\(text)\" is not [sip:]IP:PORT (names are not looked up; IPv6 as [::1]:5060)")
        }
        let host: SIPHost
        do {
            host = try SIPHost(parsing: socket.family == .ipv4 ? socket.hostDescription : "[\(socket.hostDescription)]")
        } catch {
            throw DaemonUsageError("\(source): \"\(text)\" is not IP:PORT")
        }
        return SIPHop(transport: transport, host: host, port: socket.port)
    }

    /// The SIP over TLS settings, into `configuration` (after `--sip-listen` and the
    /// gateway are read): the listener needs `--sip-listen`, a certificate and a key; a
    /// gateway hop over TLS needs the listener (its port is the one Via and Contact name).
    static func applyTLS(_ settings: DaemonCommandLine.SettingValues, to configuration: inout ServerConfiguration) throws {
        func one(_ name: String) -> (value: String, source: String)? {
            settings[name].map { ($0.values.last ?? "", $0.source) }
        }
        if let (value, source) = one("sip-tls-listen") {
            let address: SocketAddress
            do { address = try SocketAddress(parsing: value) } catch {
                throw DaemonUsageError("\(source): \"\(value)\" is not HOST:PORT with an IP address (IPv6 as [::1]:5061)")
            }
            guard let sip = configuration.sipListenAddress else { throw DaemonUsageError("\(source) needs --sip-listen") }
            // Another TCP listener on the same port would not bind.
            if address.port != 0, ([sip] + configuration.listenAddresses + configuration.tlsListenAddresses).contains(address) {
                throw DaemonUsageError("\(source): \(address) is also the --sip-listen address or an HTTP listen address")
            }
            configuration.sipTLSListenAddress = address
        }
        configuration.sipTLSCertificateFile = one("sip-tls-cert")?.value
        configuration.sipTLSKeyFile = one("sip-tls-key")?.value
        configuration.sipTLSCAFile = one("sip-tls-ca-file")?.value
        let given = [configuration.sipTLSListenAddress != nil, configuration.sipTLSCertificateFile != nil, configuration.sipTLSKeyFile != nil]
        if given.contains(true) && given.contains(false) {
            throw DaemonUsageError("--sip-tls-listen, --sip-tls-cert and --sip-tls-key go together: give all three or none")
        }
        for file in [configuration.sipTLSCertificateFile, configuration.sipTLSKeyFile, configuration.sipTLSCAFile] where file == "" {
            throw DaemonUsageError("--sip-tls-cert, --sip-tls-key and --sip-tls-ca-file must name files")
        }
        if configuration.sipTLSCAFile != nil, configuration.sipTLSListenAddress == nil {
            throw DaemonUsageError("--sip-tls-ca-file needs --sip-tls-listen")
        }
        if configuration.sipTLSListenAddress == nil, let gateway = configuration.sipGateway {
            let hops = [gateway.trunk?.hop, gateway.outboundProxy].compactMap { $0 } + gateway.routes.values
            if let hop = hops.first(where: { $0.transport == .tls }) {
                throw DaemonUsageError("a SIP hop over TLS (\(hop)) needs --sip-tls-listen, --sip-tls-cert and --sip-tls-key")
            }
        }
    }

    private static func isHost(_ text: String) -> Bool {
        (try? SIPHost(parsing: text)) != nil
    }
}

