import ParleyNetCore
import ParleyPush
import ParleyServer
import Testing

@testable import ParleyDaemon

/// `DaemonCommandLine.parse` as a pure function: arguments, environment and file text in,
/// a command or one error line out.
@Suite struct DaemonConfigurationTests {
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

    @Test func defaults() throws {
        let parsed = try configuration([])
        #expect(parsed == ServerConfiguration(dataDirectory: "./.parley"))
        #expect(parsed.listenAddresses == [.ipv4Loopback(port: 8080)])
        #expect(parsed.mediaPorts == 8081...10080)
        #expect(try configuration(["serve"]) == parsed)
    }

    @Test func everyFlag() throws {
        let parsed = try configuration([
            "--data-dir", "/var/lib/parley", "--listen", "127.0.0.1:9000", "--listen=[::1]:9000",
            "--media-ports", "30000-30999", "--media-address", "127.0.0.1", "--announce-address", "203.0.113.7",
            "--ring-timeout", "45", "--media-timeout", "12.5", "--media-setup-timeout", "9", "--max-call-length", "7200",
            "--reconnect-grace", "20", "--hello-timeout", "5", "--heartbeat", "15", "--max-frame-size", "32768",
            "--max-requests-per-second", "10", "--request-burst", "30", "--max-connections", "500", "--edge-loops", "2",
            "--log-level", "debug", "--no-dev-app",
        ])
        #expect(parsed.dataDirectory == "/var/lib/parley")
        #expect(parsed.listenAddresses == [try SocketAddress(parsing: "127.0.0.1:9000"), .ipv6Loopback(port: 9000)])
        #expect(parsed.mediaPorts == 30000...30999)
        #expect(parsed.mediaBindAddress == .ipv4Loopback(port: 0))
        #expect(parsed.mediaAnnouncedAddress == SocketAddress(ipv4: 203, 0, 113, 7, port: 0))
        #expect(parsed.ringTimeout == .seconds(45))
        #expect(parsed.mediaInactivityTimeout == .milliseconds(12_500))
        #expect(parsed.mediaSetupTimeout == .seconds(9))
        #expect(parsed.maximumCallLength == .seconds(7200))
        #expect(parsed.reconnectGrace == .seconds(20))
        #expect(parsed.helloTimeout == .seconds(5))
        #expect(parsed.heartbeatInterval == .seconds(15))
        #expect(parsed.maxFrameSize == 32768)
        #expect(parsed.maxRequestsPerSecond == 10)
        #expect(parsed.requestBurst == 30)
        #expect(parsed.maxConnections == 500)
        #expect(parsed.edgeLoopCount == 2)
        #expect(parsed.logLevel == .debug)
        #expect(parsed.createDevelopmentApplication == false)
    }

    /// `--recording-directory` (docs/operations.md): none by default; the flag, the
    /// environment and the file set it; empty unsets it. (parleyd checks it is a writable
    /// directory when the server is made: `CallRecordingTests`.)
    @Test func theRecordingDirectoryIsOptional() throws {
        #expect(try configuration([]).recordingDirectory == nil)
        #expect(try configuration(["--recording-directory", "/var/lib/parley/rec"]).recordingDirectory == "/var/lib/parley/rec")
        #expect(try configuration([], environment: ["PARLEY_RECORDING_DIRECTORY": "/r"]).recordingDirectory == "/r")
        #expect(try configuration(["--config", "/c.json"], files: ["/c.json": #"{"recordingDirectory": "/f"}"#]).recordingDirectory == "/f")
        #expect(try configuration(["--recording-directory="]).recordingDirectory == nil)
    }

    @Test func mediaDefaultsFollowTheListenAddress() throws {
        let parsed = try configuration(["--listen", "[::1]:9000"])
        #expect(parsed.mediaBindAddress == .ipv6Loopback(port: 0))
        #expect(parsed.mediaPorts == 9001...11000)
        #expect(try configuration(["--media-ports", "40000"]).mediaPorts == 40000...40000)
        #expect(try configuration(["--media-address", "[::1]"]).mediaBindAddress == .ipv6Loopback(port: 0))
    }

    @Test func precedenceFlagsThenEnvironmentThenFileThenDefaults() throws {
        let files = ["/etc/parley.json": #"{"ringTimeout": 10, "heartbeat": 11, "helloTimeout": 12, "listen": ["127.0.0.1:7000"], "noDevApp": true}"#]
        let environment = ["PARLEY_CONFIG": "/etc/parley.json", "PARLEY_RING_TIMEOUT": "20", "PARLEY_HEARTBEAT": "21"]
        let parsed = try configuration(["--ring-timeout", "30"], environment: environment, files: files)
        #expect(parsed.ringTimeout == .seconds(30))       // flag over environment and file
        #expect(parsed.heartbeatInterval == .seconds(21)) // environment over file
        #expect(parsed.helloTimeout == .seconds(12))      // file over default
        #expect(parsed.reconnectGrace == .seconds(30))    // default
        #expect(parsed.listenAddresses == [try SocketAddress(parsing: "127.0.0.1:7000")])
        #expect(parsed.createDevelopmentApplication == false)
        // --config on the command line wins over PARLEY_CONFIG.
        let other = try configuration(["--config", "/b.json"], environment: environment, files: files.merging(["/b.json": #"{"helloTimeout": 3}"#]) { $1 })
        #expect(other.helloTimeout == .seconds(3))
        #expect(other.heartbeatInterval == .seconds(21))
    }

    @Test func environmentSpellings() throws {
        let parsed = try configuration([], environment: [
            "PARLEY_LISTEN": "127.0.0.1:8000, [::1]:8000", "PARLEY_NO_DEV_APP": "yes", "PARLEY_DATA_DIR": "/tmp/x",
            "PARLEY_LOG_LEVEL": "warning", "PARLEY_UNRELATED": "ignored", "PARLEY_MEDIA_PORTS": "",
        ])
        #expect(parsed.listenAddresses == [try SocketAddress(parsing: "127.0.0.1:8000"), .ipv6Loopback(port: 8000)])
        #expect(parsed.createDevelopmentApplication == false)
        #expect(parsed.dataDirectory == "/tmp/x")
        #expect(parsed.logLevel == .warning)
        #expect(parsed.mediaPorts == 8001...10000) // empty counts as unset
        #expect(try configuration([], environment: ["PARLEY_NO_DEV_APP": "0"]).createDevelopmentApplication == true)
    }

    @Test func fileSpellings() throws {
        let file = #"{"dataDir": "/srv/p", "listen": "127.0.0.1:8100", "mediaPorts": "20000-20099", "mediaTimeout": 1.5, "logLevel": "error"}"#
        let parsed = try configuration(["--config", "/p.json"], files: ["/p.json": file])
        #expect(parsed.dataDirectory == "/srv/p")
        #expect(parsed.listenAddresses == [try SocketAddress(parsing: "127.0.0.1:8100")])
        #expect(parsed.mediaPorts == 20000...20099)
        #expect(parsed.mediaInactivityTimeout == .milliseconds(1500))
        #expect(parsed.logLevel == .error)
        #expect(try configuration(["--config", "/q.json"], files: ["/q.json": #"{"mediaPorts": 20000}"#]).mediaPorts == 20000...20000)
    }

    @Test func pushSettings() throws {
        let defaults = try configuration([])
        #expect(defaults.pushEndpoints == .providers)
        #expect(defaults.pushFCMTokenURL == nil && defaults.pushCAFile == nil)
        #expect(defaults.pushRequestTimeout == .seconds(10))
        #expect(defaults.pushRetryPolicy == PushRetryPolicy())

        let flags = try configuration([
            "--apns-url", "https://127.0.0.1:8443/", "--apns-sandbox-url", "https://127.0.0.1:8444",
            "--fcm-url=https://[::1]:8445", "--fcm-token-url", "https://127.0.0.1:8445/token", "--push-ca-file", "/etc/ca.pem",
            "--push-timeout", "2.5", "--push-attempts", "6", "--push-retry-delay", "0.05", "--push-retry-max-delay", "1",
        ])
        #expect(flags.pushEndpoints == PushEndpoints(apnsProduction: "https://127.0.0.1:8443", apnsDevelopment: "https://127.0.0.1:8444",
                                                     fcm: "https://[::1]:8445"))
        #expect(flags.pushFCMTokenURL == "https://127.0.0.1:8445/token")
        #expect(flags.pushCAFile == "/etc/ca.pem")
        #expect(flags.pushRequestTimeout == .milliseconds(2500))
        #expect(flags.pushRetryPolicy == PushRetryPolicy(maxAttempts: 6, baseDelayMilliseconds: 50, maxDelayMilliseconds: 1000))

        let environment = try configuration([], environment: [
            "PARLEY_APNS_URL": "http://127.0.0.1:9", "PARLEY_PUSH_CA_FILE": "/ca.pem", "PARLEY_PUSH_ATTEMPTS": "1",
            "PARLEY_FCM_TOKEN_URL": "https://t.example/token",
        ])
        #expect(environment.pushEndpoints.apnsProduction == "http://127.0.0.1:9")
        #expect(environment.pushEndpoints.apnsDevelopment == PushEndpoints.providers.apnsDevelopment)
        #expect(environment.pushCAFile == "/ca.pem")
        #expect(environment.pushRetryPolicy.maxAttempts == 1)
        #expect(environment.pushFCMTokenURL == "https://t.example/token")

        let file = #"{"fcmUrl": "https://127.0.0.1:7000", "pushTimeout": 3, "pushRetryMaxDelay": 0.5, "pushCaFile": "/f.pem"}"#
        let fromFile = try configuration(["--config", "/p.json"], files: ["/p.json": file])
        #expect(fromFile.pushEndpoints.fcm == "https://127.0.0.1:7000")
        #expect(fromFile.pushRequestTimeout == .seconds(3))
        #expect(fromFile.pushRetryPolicy.maxDelayMilliseconds == 500)
        #expect(fromFile.pushCAFile == "/f.pem")

        #expect(error(["--apns-url", "api.push.apple.com"])
                == #"--apns-url: "api.push.apple.com" is not an https:// or http:// URL without query or fragment"#)
        #expect(error(["--fcm-url", "https://"]) == #"--fcm-url: "https://" is not an https:// or http:// URL without query or fragment"#)
        #expect(error(["--fcm-token-url", "https://a b"])
                == #"--fcm-token-url: "https://a b" is not an https:// or http:// URL without query or fragment"#)
        #expect(error(["--apns-url", "https://h/?x=1"]) == #"--apns-url: "https://h/?x=1" is not an https:// or http:// URL without query or fragment"#)
        #expect(error(["--push-ca-file", ""]) == "--push-ca-file: the certificate file must not be empty")
        #expect(error(["--push-attempts", "0"]) == #"--push-attempts: "0" is not a whole number in 1...20"#)
        #expect(error(["--push-retry-delay", "2", "--push-retry-max-delay", "1"])
                == "--push-retry-max-delay: the largest push backoff must not be below the first (push-retry-delay)")
        #expect(error(["--push-retry-delay", "6"])
                == "--push-retry-delay: the largest push backoff must not be below the first (push-retry-delay)")
        #expect(error([], environment: ["PARLEY_PUSH_TIMEOUT": "never"])
                == #"PARLEY_PUSH_TIMEOUT: "never" is not a number of seconds (0.001 to 100000000)"#)
    }

    @Test func helpAndVersion() {
        #expect(parse(["--help"]) == .success(.help))
        #expect(parse(["help"]) == .success(.help))
        #expect(parse(["--listen", "127.0.0.1:1", "--help"]) == .success(.help))
        #expect(parse(["--version"]) == .success(.version))
        #expect(parse(["app", "--help"]) == .success(.help))
    }

    @Test(arguments: [
        (["--bogus"], "unknown flag --bogus (see parleyd --help)"),
        (["--ring-timeout"], "--ring-timeout needs a value (SECONDS)"),
        (["--ring-timeout", "abc"], #"--ring-timeout: "abc" is not a number of seconds (0.001 to 100000000)"#),
        (["--ring-timeout", "0"], #"--ring-timeout: "0" is not a number of seconds (0.001 to 100000000)"#),
        (["--ring-timeout", "-5"], #"--ring-timeout: "-5" is not a number of seconds (0.001 to 100000000)"#),
        (["--ring-timeout", "1e3"], #"--ring-timeout: "1e3" is not a number of seconds (0.001 to 100000000)"#),
        (["--ring-timeout", "5", "--ring-timeout", "6"], "--ring-timeout is given more than once"),
        (["--listen", "localhost:8080"], #"--listen: "localhost:8080" is not HOST:PORT with an IP address (IPv6 as [::1]:8080)"#),
        (["--listen", "127.0.0.1"], #"--listen: "127.0.0.1" is not HOST:PORT with an IP address (IPv6 as [::1]:8080)"#),
        (["--listen", "127.0.0.1:80", "--listen", "127.0.0.1:80"], "--listen: 127.0.0.1:80 is given more than once"),
        (["--listen", "::1:80"], #"--listen: "::1:80" is not HOST:PORT with an IP address (IPv6 as [::1]:8080)"#),
        (["--media-ports", "2000-1000"], #"--media-ports: "2000-1000" is not a UDP port range LO-HI or one port (1-65535)"#),
        (["--media-ports", "0-10"], #"--media-ports: "0-10" is not a UDP port range LO-HI or one port (1-65535)"#),
        (["--media-ports", "1-2-3"], #"--media-ports: "1-2-3" is not a UDP port range LO-HI or one port (1-65535)"#),
        (["--media-ports", "70000"], #"--media-ports: "70000" is not a UDP port range LO-HI or one port (1-65535)"#),
        (["--media-address", "example.com"], #"--media-address: "example.com" is not an IP address"#),
        (["--log-level", "loud"], #"--log-level: "loud" is not a log level (debug, info, warning, error)"#),
        (["--max-frame-size", "12"], #"--max-frame-size: "12" is not a whole number in 1024...16777216"#),
        (["--no-dev-app=yes"], "--no-dev-app takes no value"),
        (["--data-dir", ""], "--data-dir: the data directory must not be empty"),
        (["serve", "extra"], #"unexpected argument "extra" (see parleyd --help)"#),
        (["-x"], #"unexpected argument "-x" (see parleyd --help)"#),
        (["--config", "/missing.json"], "cannot read configuration file /missing.json: NoFile()"),
    ] as [([String], String)])
    func badCommandLines(arguments: [String], message: String) {
        #expect(error(arguments) == message)
    }

    @Test func badEnvironmentAndFiles() {
        #expect(error([], environment: ["PARLEY_HEARTBEAT": "soon"])
                == #"PARLEY_HEARTBEAT: "soon" is not a number of seconds (0.001 to 100000000)"#)
        #expect(error([], environment: ["PARLEY_NO_DEV_APP": "maybe"])
                == #"PARLEY_NO_DEV_APP: "maybe" is not a boolean (true/false, 1/0, yes/no)"#)
        // A bad value that a higher layer overrides does not matter.
        #expect(error(["--heartbeat", "5"], environment: ["PARLEY_HEARTBEAT": "soon"]) == nil)
        let file = { (text: String) in self.error(["--config", "/c.json"], files: ["/c.json": text]) }
        #expect(file(#"{"ringtimeout": 5}"#) == #"unknown key "ringtimeout" in configuration file /c.json (see parleyd --help)"#)
        #expect(file(#"{"config": "/other.json"}"#) == #"unknown key "config" in configuration file /c.json (see parleyd --help)"#)
        #expect(file(#"{"ringTimeout": "5"}"#) == #""ringTimeout" in /c.json: expected a number of seconds"#)
        #expect(file(#"{"noDevApp": 1}"#) == #""noDevApp" in /c.json: expected true or false"#)
        #expect(file(#"{"listen": [8080]}"#) == #""listen" in /c.json: expected an array of strings"#)
        #expect(file(#"{"maxConnections": 1.5}"#) == #""maxConnections" in /c.json: "1.5" is not a whole number in 1...10000000"#)
        #expect(file("[1, 2]")?.hasPrefix("configuration file /c.json is not a JSON object") == true)
        #expect(file("{")?.hasPrefix("configuration file /c.json is not a JSON object") == true)
        #expect(file("")?.hasPrefix("configuration file /c.json is not a JSON object") == true)
    }

    @Test func appCommands() {
        #expect(parse(["app", "create"]) == .success(.appCreate(AdminOptions(dataDirectory: "./.parley", json: false), name: "default")))
        #expect(parse(["app", "create", "--name", "shop", "--data-dir", "/d", "--json"])
                == .success(.appCreate(AdminOptions(dataDirectory: "/d", json: true), name: "shop")))
        #expect(parse(["app", "list", "--show-secrets"], environment: ["PARLEY_DATA_DIR": "/e"])
                == .success(.appList(AdminOptions(dataDirectory: "/e", json: false), showSecrets: true)))
        #expect(parse(["app", "list", "--config", "/c.json"], files: ["/c.json": #"{"dataDir": "/f"}"#])
                == .success(.appList(AdminOptions(dataDirectory: "/f", json: false), showSecrets: false)))
        #expect(parse(["app", "rotate-secret", "k1", "--grace", "0", "--json"])
                == .success(.appRotateSecret(AdminOptions(dataDirectory: "./.parley", json: true), key: "k1", gracePeriodSeconds: 0)))
        #expect(parse(["app", "rotate-secret", "k1"])
                == .success(.appRotateSecret(AdminOptions(dataDirectory: "./.parley", json: false), key: "k1", gracePeriodSeconds: 86_400)))
        // Other serve settings in the environment do not disturb app commands.
        #expect(parse(["app", "list"], environment: ["PARLEY_HEARTBEAT": "soon"])
                == .success(.appList(AdminOptions(dataDirectory: "./.parley", json: false), showSecrets: false)))

        #expect(error(["app"]) == "parleyd app needs a command: create, list, rotate-secret, show, set-cli, set-dialling, push or callback (see parleyd --help)")
        #expect(error(["app", "delete"]) == #"unknown app command "delete" (create, list, rotate-secret, show, set-cli, set-dialling, push, callback)"#)
        #expect(error(["app", "rotate-secret"]) == "parleyd app rotate-secret needs the application KEY")
        #expect(error(["app", "rotate-secret", "a", "b"]) == "parleyd app rotate-secret takes one KEY, not 2")
        #expect(error(["app", "rotate-secret", "a", "--grace", "-1"]) == #"--grace: "-1" is not a whole number in 0...315360000"#)
        #expect(error(["app", "list", "--name", "x"]) == "unknown flag --name for parleyd app list (see parleyd --help)")
        #expect(error(["app", "create", "--name"]) == "--name needs a value")
        #expect(error(["app", "create", "extra"]) == #"unexpected argument "extra" for parleyd app create"#)
    }

    @Test func usageNamesEverySetting() {
        let text = DaemonUsage.text
        for option in ConfigurationOption.all {
            #expect(text.contains(option.flag))
            #expect(text.contains(option.environmentName))
            if option.inFile { #expect(text.contains(option.jsonKey)) }
        }
        #expect(ConfigurationOption.named("max-call-length")?.environmentName == "PARLEY_MAX_CALL_LENGTH")
        #expect(ConfigurationOption.named("max-call-length")?.jsonKey == "maxCallLength")
        for command in ["app create", "app list", "app rotate-secret", "--show-secrets", "--grace", "--json"] {
            #expect(text.contains(command))
        }
    }
}

/// `--tls-listen`, `--tls-cert`, `--tls-key` in their three spellings, and their rules.
@Suite struct DaemonTLSConfigurationTests {
    struct NoFile: Error {}

    private func parse(_ arguments: [String], environment: [String: String] = [:],
                       files: [String: String] = [:]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: environment) { path in
            guard let text = files[path] else { throw NoFile() }
            return text
        }
    }

    @Test func flagsEnvironmentAndFileSetTheTLSListener() throws {
        let flags = parse(["serve", "--tls-listen", "127.0.0.1:8443", "--tls-listen", "[::1]:8443", "--tls-cert", "c.pem", "--tls-key", "k.pem"])
        guard case .success(.serve(let configuration)) = flags else { Issue.record("\(flags)"); return }
        #expect(configuration.tlsListenAddresses == [try SocketAddress(parsing: "127.0.0.1:8443"), try SocketAddress(parsing: "[::1]:8443")])
        #expect(configuration.tlsCertificateFile == "c.pem")
        #expect(configuration.tlsKeyFile == "k.pem")
        let environment = parse(["serve"], environment: ["PARLEY_TLS_LISTEN": "0.0.0.0:443", "PARLEY_TLS_CERT": "/etc/c.pem", "PARLEY_TLS_KEY": "/etc/k.pem"])
        guard case .success(.serve(let fromEnvironment)) = environment else { Issue.record("\(environment)"); return }
        #expect(fromEnvironment.tlsListenAddresses == [try SocketAddress(parsing: "0.0.0.0:443")])
        let file = parse(["serve", "--config", "p.json"],
                         files: ["p.json": #"{"tlsListen": ["127.0.0.1:9443"], "tlsCert": "a.pem", "tlsKey": "b.pem"}"#])
        guard case .success(.serve(let fromFile)) = file else { Issue.record("\(file)"); return }
        #expect(fromFile.tlsListenAddresses == [try SocketAddress(parsing: "127.0.0.1:9443")])
        #expect(fromFile.tlsKeyFile == "b.pem")
        guard case .success(.serve(let plain)) = parse(["serve"]) else { Issue.record("plain"); return }
        #expect(plain.tlsListenAddresses.isEmpty && plain.tlsCertificateFile == nil)
    }

    @Test(arguments: [
        (["--tls-listen", "127.0.0.1:8443"], "go together"),
        (["--tls-cert", "c.pem", "--tls-key", "k.pem"], "go together"),
        (["--tls-listen", "localhost:8443", "--tls-cert", "c", "--tls-key", "k"], "not HOST:PORT"),
        (["--tls-listen", "127.0.0.1:8080", "--tls-cert", "c", "--tls-key", "k"], "also a plain listen address"),
    ])
    func badTLSSettingsAreOneClearLine(arguments: [String], expected: String) {
        guard case .failure(let error) = parse(["serve"] + arguments) else {
            Issue.record("accepted \(arguments)")
            return
        }
        #expect(error.message.contains(expected), "\(error.message)")
    }
}
