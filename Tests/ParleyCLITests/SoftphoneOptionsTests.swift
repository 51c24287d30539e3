import Testing
import ParleyAuth
@testable import ParleyCLI

/// `parley call` / `parley listen` flags: each rule, defaults, and that every bad input is
/// a one-line usage error rather than a crash.
@Suite struct SoftphoneOptionsTests {
    static let key = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    static let secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    /// The worked example's token from docs/protocol.md (user alice).
    static let token = "eyJhbGciOiJIUzI1NiIsImtpZCI6ImhrZGZ2MS0yMDI1MTEyOSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiIvL3BhcmxleS9hcHBsaWNhdGlvbnMvM2Y2YzFmMmUtOGQzYS00YjdlLTljMWQtNWEyYjdlOWYwYzQxIiwic3ViIjoiLy9wYXJsZXkvYXBwbGljYXRpb25zLzNmNmMxZjJlLThkM2EtNGI3ZS05YzFkLTVhMmI3ZTlmMGM0MS91c2Vycy9hbGljZSIsImlhdCI6MTc2NDQyMTIwMCwiZXhwIjoxNzY0NTA3NjAwLCJub25jZSI6InEzWnQ4eVcxIn0.vEF3qUKaJUGL7vMNLpnP_Bk9c-QoTU_QD_768n7vktg"
    static let base = ["--server", "http://127.0.0.1:8080", "--app", key, "--secret", secret, "--as", "alice"]

    @Test func callDefaults() throws {
        let options = try SoftphoneOptions.parse(command: "call", ["bob"] + Self.base)
        #expect(options.mode == .call(callee: "bob"))
        #expect(options.serverURL == "http://127.0.0.1:8080")
        #expect(options.credentials == .secret(Self.secret, lifetime: 600))
        #expect(options.userID == "alice")
        #expect(options.source == .tone(frequency: 440))
        #expect(options.recordPath == nil)
        #expect(options.duration == nil)
        #expect(options.headers.isEmpty)
        #expect(options.json == false)
        #expect(options.connectTimeout == 10)
    }

    @Test func caFileGoesWithAnHTTPSServer() throws {
        let https = ["--server", "https://localhost:8443"] + Self.base.dropFirst(2)
        #expect(try SoftphoneOptions.parse(command: "call", ["bob"] + https + ["--ca-file", "dev-ca.pem"]).caFile == "dev-ca.pem")
        #expect(try SoftphoneOptions.parse(command: "call", ["bob"] + https).caFile == nil)
        #expect(throws: SoftphoneUsageError.self) { try SoftphoneOptions.parse(command: "call", ["bob"] + Self.base + ["--ca-file", "dev-ca.pem"]) }
        #expect(throws: SoftphoneUsageError.self) { try SoftphoneOptions.parse(command: "call", ["bob"] + https + ["--ca-file", ""]) }
    }

    @Test func listenDefaults() throws {
        let options = try SoftphoneOptions.parse(command: "listen", Self.base)
        #expect(options.mode == .listen)
        #expect(options.source == .tone(frequency: 1000))
        #expect(options.answerPolicy == .interactive)
        #expect(options.callCount == 0)
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base + ["--answer"]).callCount == 1)
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base + ["--decline"]).answerPolicy == .decline)
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base + ["--decline"]).callCount == 1)
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base + ["--answer", "--count", "3"]).callCount == 3)
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base + ["--count", "0", "--answer"]).callCount == 0)
        #expect(try SoftphoneOptions.parse(command: "listen", Self.base + ["--answer", "--answer-delay", "1.5"]).answerPolicy == .answer(delay: 1.5))
    }

    @Test func everyFlag() throws {
        let options = try SoftphoneOptions.parse(command: "call", [
            "--server=https://calls.example.com:8443/", "bob", "--app", Self.key, "--secret", Self.secret, "--ttl", "120",
            "--as", "alice", "--device-id", "cli-1", "--play", "in.wav", "--record", "out.wav", "--duration", "2.5",
            "--header", "X-Order=1187", "--header", "topic=a=b", "--json", "--stats-interval", "0.5", "--connect-timeout", "3",
        ])
        #expect(options.serverURL == "https://calls.example.com:8443/")
        #expect(options.credentials == .secret(Self.secret, lifetime: 120))
        #expect(options.deviceID == "cli-1")
        #expect(options.source == .wavFile(path: "in.wav"))
        #expect(options.recordPath == "out.wav")
        #expect(options.duration == 2.5)
        #expect(options.headers == ["X-Order": "1187", "topic": "a=b"])
        #expect(options.json)
        #expect(options.statisticsInterval == 0.5)
        #expect(options.connectTimeout == 3)
    }

    @Test func tokenGivesTheUser() throws {
        let options = try SoftphoneOptions.parse(command: "listen", ["--server", "http://[::1]:8080", "--app", Self.key, "--token", Self.token])
        #expect(options.userID == "alice")
        #expect(options.credentials == .token(Self.token))
        #expect(try SoftphoneOptions.parse(command: "listen", ["--server", "http://h", "--app", Self.key, "--token", Self.token, "--as", "alice"]).userID == "alice")
    }

    @Test(arguments: [
        ("call", [String](), "missing the user to call"),
        ("call", ["bob", "carol"], "one user to call, not 2"),
        ("call", ["bo b"], "user to call 'bo b' is not a user id"),
        ("listen", ["bob"], "unexpected argument 'bob'"),
        ("call", ["bob", "--frobnicate"], "unknown option '--frobnicate' for parley call"),
        ("call", ["bob", "--answer"], "unknown option '--answer' for parley call"),
        ("listen", ["--header", "a=b"], "unknown option '--header' for parley listen"),
        ("call", ["bob", "--duration"], "--duration needs a value"),
        ("call", ["bob", "--duration", "--json"], "--duration needs a value"),
        ("call", ["bob", "--duration", "0"], "--duration needs a number of seconds above 0"),
        ("call", ["bob", "--duration", "nan"], "--duration needs a number of seconds"),
        ("call", ["bob", "--duration", "-1"], "--duration needs a number of seconds"),
        ("call", ["bob", "--tone", "5"], "--tone needs a frequency in Hz from 20 to 20000"),
        ("call", ["bob", "--tone", "440", "--play", "x.wav"], "--play and --tone exclude each other"),
        ("call", ["bob", "--ttl", "0"], "--ttl needs whole seconds from 1 to 86400"),
        ("call", ["bob", "--ttl", "86401"], "--ttl needs whole seconds"),
        ("call", ["bob", "--json=yes"], "--json takes no value"),
        ("call", ["bob", "--header", "novalue"], "--header needs NAME=VALUE"),
        ("call", ["bob", "--header", "bad name=1"], "--header name 'bad name' must be"),
        ("call", ["bob", "--header", "=1"], "--header name '' must be"),
        ("call", ["bob", "--header", "a=\u{1}"], "the value has a control character"),
        ("call", ["bob", "--header", "a=1", "--header", "a=2"], "--header a given twice"),
        ("call", ["bob", "--play", ""], "--play needs a file path"),
        ("call", ["bob", "--device-id", "a b"], "--device-id 'a b' must be"),
        ("listen", ["--answer", "--decline"], "--answer and --decline exclude each other"),
        ("listen", ["--answer-delay", "1"], "--answer-delay needs --answer"),
        ("listen", ["--count", "-1"], "--count needs a number of calls"),
        ("listen", ["--as", "bob"], "--as given twice"),
    ])
    func usageErrors(command: String, extra: [String], message: String) {
        #expect(throws: SoftphoneUsageError.self) { try SoftphoneOptions.parse(command: command, extra + Self.base) }
        do {
            _ = try SoftphoneOptions.parse(command: command, extra + Self.base)
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test(arguments: [
        (["--app", key, "--secret", secret, "--as", "alice"], "missing --server URL"),
        (["--server", "127.0.0.1:8080", "--app", key, "--secret", secret, "--as", "alice"], "must start with http:// or https://"),
        (["--server", "http://", "--app", key, "--secret", secret, "--as", "alice"], "must be http(s)://HOST[:PORT] with no path"),
        (["--server", "http://h/v1/ws", "--app", key, "--secret", secret, "--as", "alice"], "with no path"),
        (["--server", "http://h:0", "--app", key, "--secret", secret, "--as", "alice"], "port '0' is not 1-65535"),
        (["--server", "http://h:99999", "--app", key, "--secret", secret, "--as", "alice"], "port '99999' is not 1-65535"),
        (["--server", "http://[::1", "--app", key, "--secret", secret, "--as", "alice"], "unclosed '['"),
        (["--server", "http://:80", "--app", key, "--secret", secret, "--as", "alice"], "has no host"),
        (["--server", "http://h", "--secret", secret, "--as", "alice"], "missing --app KEY"),
        (["--server", "http://h", "--app", "k e y", "--secret", secret, "--as", "alice"], "is not an application key"),
        (["--server", "http://h", "--app", key, "--as", "alice"], "missing --secret SECRET (to mint tokens) or --token JWT"),
        (["--server", "http://h", "--app", key, "--secret", secret, "--token", token], "--secret and --token exclude each other"),
        (["--server", "http://h", "--app", key, "--secret", "not base64", "--as", "alice"], "--secret is not an application secret"),
        (["--server", "http://h", "--app", key, "--secret", secret], "missing --as USER"),
        (["--server", "http://h", "--app", key, "--secret", secret, "--as", "al ice"], "--as 'al ice' is not a user id"),
        (["--server", "http://h", "--app", key, "--token", "abc"], "bad token:"),
        (["--server", "http://h", "--app", "other-app", "--token", token], "bad token: it is for application"),
        (["--server", "http://h", "--app", key, "--token", token, "--as", "bob"], "bad token: it is for user 'alice', not --as 'bob'"),
        (["--server", "http://h", "--app", key, "--token", token, "--ttl", "60"], "--ttl applies only to tokens minted with --secret"),
    ])
    func connectionUsageErrors(arguments: [String], message: String) {
        do {
            _ = try SoftphoneOptions.parse(command: "listen", arguments)
            Issue.record("accepted \(arguments)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func headerLimits() throws {
        let many = (0..<65).flatMap { ["--header", "h\($0)=v"] }
        #expect(throws: SoftphoneUsageError("at most 64 --header flags, not 65")) {
            try SoftphoneOptions.parse(command: "call", ["bob"] + Self.base + many)
        }
        let big = ["--header", "a=" + String(repeating: "x", count: 1024)]
        #expect(throws: SoftphoneUsageError("--header names and values total 1025 bytes; the protocol allows 1024")) {
            try SoftphoneOptions.parse(command: "call", ["bob"] + Self.base + big)
        }
        let exact = ["--header", "a=" + String(repeating: "x", count: 1023)]
        #expect(try SoftphoneOptions.parse(command: "call", ["bob"] + Self.base + exact).headers["a"]?.count == 1023)
    }

    @Test func tokenCommandParsesAndMints() throws {
        let options = try TokenCommand.parse(["--app", Self.key, "--secret", Self.secret, "--as=alice", "--ttl", "60"])
        #expect(options == .init(applicationKey: Self.key, secret: Self.secret, userID: "alice", lifetime: 60))
        let token = try TokenCommand.mint(options, now: 1_764_421_200)
        #expect(token.hasPrefix("eyJhbGciOiJIUzI1NiIsImtpZCI6ImhrZGZ2MS0yMDI1MTEyOSIsInR5cCI6IkpXVCJ9."))
        // The server's verifier accepts it, for the right user and lifetime.
        let application = try ApplicationCredentials(key: Self.key, secret: ApplicationSecret(base64: Self.secret))
        let verified = try TokenVerifier().verifyIgnoringReplay(token, for: application, now: 1_764_421_230)
        #expect(verified.userID == "alice")
        #expect(verified.expiresAt == 1_764_421_260)
        #expect(try TokenCommand.mint(options, now: 1_764_421_200) != token, "each token gets a fresh nonce")
        #expect(throws: SoftphoneUsageError("missing --as USER")) { try TokenCommand.parse(["--app", Self.key, "--secret", Self.secret]) }
        #expect(throws: SoftphoneUsageError("unknown option '--user'")) { try TokenCommand.parse(["--user", "x"]) }
        #expect(throws: SoftphoneUsageError.self) {
            try TokenCommand.mint(.init(applicationKey: Self.key, secret: Self.secret, userID: "a b"), now: 1_764_421_200)
        }
    }
}
