import Testing
import ParleyAuth

/// `parley token`, `parley call` and `parley listen` as a user runs them: help, a token
/// that verifies, and one-line errors with status 2 for everything wrong before a call.
@Suite struct SoftphoneCommandTests {
    static let key = "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41"
    static let secret = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

    @Test func tokenPrintsAVerifiableToken() throws {
        let result = try ParleyProcess.run(["token", "--app", Self.key, "--secret", Self.secret, "--as", "alice", "--ttl", "120"])
        #expect(result.status == 0, "\(result.stderr)")
        let token = String(result.stdout.dropLast())
        #expect(result.stdout.hasSuffix("\n") && !token.contains("\n"))
        let claims = try UserToken.decodeUnverified(token)
        #expect(claims.userID == "alice")
        #expect(claims.expiresAt - claims.issuedAt == 120)
        let application = try ApplicationCredentials(key: Self.key, secret: ApplicationSecret(base64: Self.secret))
        #expect(try TokenVerifier().verifyIgnoringReplay(token, for: application, now: claims.issuedAt).userID == "alice")
    }

    @Test(arguments: [
        (["token"], "parley token: missing --app KEY\n"),
        (["token", "--app", key, "--secret", "x", "--as", "alice"], "parley token: cannot mint a token:"),
        (["call"], "parley call: missing the user to call"),
        (["call", "bob", "--server", "http://127.0.0.1:9", "--app", key, "--secret", secret, "--as", "alice", "--play", "/nonexistent.wav"],
         "parley call: --play /nonexistent.wav:"),
        (["listen", "--server", "http://127.0.0.1:9", "--app", key, "--secret", secret, "--as", "bob", "--record", "/nonexistent/dir/x.wav"],
         "parley listen: --record /nonexistent/dir/x.wav: directory '/nonexistent/dir' does not exist"),
        (["listen", "--server", "http://127.0.0.1:9", "--app", key, "--token", "a.b.c"], "parley listen: bad token:"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let result = try ParleyProcess.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "one line: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func unreachableServerIsStatus2() throws {
        // Port 9 (discard) on loopback: nothing listens there on a test machine.
        let result = try ParleyProcess.run(["call", "bob", "--server", "http://127.0.0.1:9", "--app", Self.key,
                                            "--secret", Self.secret, "--as", "alice", "--connect-timeout", "5"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("parley call: cannot sign in to http://127.0.0.1:9:"), "\(result.stderr)")
        #expect(result.stdout.contains("connecting to http://127.0.0.1:9 as alice"))
    }

    @Test(arguments: ["call", "listen", "token"])
    func helpExitsZero(command: String) throws {
        let result = try ParleyProcess.run([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("usage: parley \(command)"))
    }
}
