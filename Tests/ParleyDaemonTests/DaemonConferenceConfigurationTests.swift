import ParleyServer
import Testing

@testable import ParleyDaemon

/// The conference settings on parleyd's command line, environment and configuration file.
@Suite struct DaemonConferenceConfigurationTests {
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

    private func error(_ arguments: [String], environment: [String: String] = [:]) -> String? {
        guard case .failure(let error) = parse(arguments, environment: environment) else { return nil }
        return error.message
    }

    @Test func opusComplexityDefaultsToNineAndTakesZeroToTen() throws {
        #expect(try configuration([]).conferenceOpusComplexity == 9)
        #expect(try configuration(["--conference-opus-complexity", "4"]).conferenceOpusComplexity == 4)
        #expect(try configuration(["--conference-opus-complexity=0"]).conferenceOpusComplexity == 0)
        #expect(try configuration(["--conference-opus-complexity", "10"]).conferenceOpusComplexity == 10)
        #expect(try configuration([], environment: ["PARLEY_CONFERENCE_OPUS_COMPLEXITY": "5"]).conferenceOpusComplexity == 5)
        let files = ["/c.json": #"{"conferenceOpusComplexity": 3}"#]
        #expect(try configuration(["--config", "/c.json"], files: files).conferenceOpusComplexity == 3)
        // The flag over the environment.
        let both = try configuration(["--conference-opus-complexity", "2"], environment: ["PARLEY_CONFERENCE_OPUS_COMPLEXITY": "7"])
        #expect(both.conferenceOpusComplexity == 2)
        // It leaves the other conference settings alone.
        #expect(try configuration(["--conference-opus-complexity", "4"]).conferenceRoomRate == 48_000)
    }

    @Test(arguments: [
        (["--conference-opus-complexity", "11"], #"--conference-opus-complexity: "11" is not a whole number in 0...10"#),
        (["--conference-opus-complexity", "-1"], #"--conference-opus-complexity: "-1" is not a whole number in 0...10"#),
        (["--conference-opus-complexity", "high"], #"--conference-opus-complexity: "high" is not a whole number in 0...10"#),
        (["--conference-opus-complexity", "4.5"], #"--conference-opus-complexity: "4.5" is not a whole number in 0...10"#),
        (["--conference-opus-complexity"], "--conference-opus-complexity needs a value (N)"),
        (["--conference-opus-complexity", "4", "--conference-opus-complexity", "5"], "--conference-opus-complexity is given more than once"),
    ] as [([String], String)])
    func badOpusComplexities(arguments: [String], message: String) {
        #expect(error(arguments) == message)
    }

    @Test func badOpusComplexityInTheEnvironment() {
        #expect(error([], environment: ["PARLEY_CONFERENCE_OPUS_COMPLEXITY": "12"])
                == #"PARLEY_CONFERENCE_OPUS_COMPLEXITY: "12" is not a whole number in 0...10"#)
    }
}
