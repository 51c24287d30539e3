@testable import ParleyDaemon
import ParleyServer
import Testing

/// `--sip-number` (static number routing) in its three spellings, and its rules.
@Suite struct DaemonNumberRouteConfigurationTests {
    struct NoFile: Error {}

    private func parse(_ arguments: [String], environment: [String: String] = [:],
                       files: [String: String] = [:]) -> Result<DaemonCommand, DaemonUsageError> {
        DaemonCommandLine.parse(arguments: arguments, environment: environment) { path in
            guard let text = files[path] else { throw NoFile() }
            return text
        }
    }

    /// The rules parleyd would start with, as `--sip-number` prints them.
    private func rules(_ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]) throws -> [String] {
        guard case .serve(let configuration) = try parse(arguments, environment: environment, files: files).get() else {
            throw NoFile()
        }
        return configuration.numberRoutes.routes.map(\.description)
    }

    private func error(_ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]) -> String? {
        if case .failure(let error) = parse(arguments, environment: environment, files: files) { return error.message }
        return nil
    }

    @Test func withoutRulesNoNumberIsKnown() throws {
        #expect(try rules(["--sip-listen", "127.0.0.1:5060"]).isEmpty)
        #expect(try rules([]).isEmpty)
        #expect(ServerConfiguration(dataDirectory: "/d").numberRoutes.isEmpty)
    }

    @Test func flagsGiveRulesInTheirOrderWithNumbersInE164() throws {
        let given = try rules(["--sip-listen", "127.0.0.1:5060", "--sip-number", "+46812345678=shop:user:alice",
                               "--sip-number=4790000000=shop:conference:standup", "--sip-number", "15550101=crm"])
        #expect(given == ["+46812345678=shop:user:alice", "+4790000000=shop:conference:standup", "+15550101=crm"])
        guard case .serve(let configuration) = try parse(["--sip-listen", "127.0.0.1:5060", "--sip-number", "4681=k:user:bob"]).get() else {
            Issue.record("not a serve command")
            return
        }
        #expect(configuration.numberRoutes.route(for: "+4681")?.description == "+4681=k:user:bob")
        #expect(configuration.numberRoutes.route(for: "4681")?.applicationKey == "k")
    }

    @Test func theFileTakesAStringOrAnArrayAndTheEnvironmentACommaSeparatedList() throws {
        let file = #"{"sipListen": "127.0.0.1:5060", "sipNumber": ["+46812345678=shop:user:alice", "15550101=crm"]}"#
        #expect(try rules(["--config", "/p.json"], files: ["/p.json": file]) == ["+46812345678=shop:user:alice", "+15550101=crm"])
        let one = #"{"sipListen": "127.0.0.1:5060", "sipNumber": "4681=k"}"#
        #expect(try rules(["--config", "/p.json"], files: ["/p.json": one]) == ["+4681=k"])
        #expect(try rules(["--sip-listen", "127.0.0.1:5060"], environment: ["PARLEY_SIP_NUMBER": "+4681=k:user:a, 4682=k"])
                == ["+4681=k:user:a", "+4682=k"])
        // Flags replace the file's list rather than adding to it, as for every setting.
        #expect(try rules(["--config", "/p.json", "--sip-number", "+4699=other"], files: ["/p.json": file]) == ["+4699=other"])
    }

    @Test(arguments: [
        (["--sip-listen", "127.0.0.1:5060", "--sip-number", "shop"],
         #"--sip-number: "shop" is not NUMBER=KEY, NUMBER=KEY:user:ID, NUMBER=KEY:conference:ID, NUMBER=KEY:number:NUMBER or NUMBER=KEY:sip:ADDRESS"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-number", "0812=shop"],
         #"--sip-number: "0812=shop" has "0812", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-number", "+4681=shop:room:a"],
         #"--sip-number: "+4681=shop:room:a" does not end in KEY, KEY:user:ID, KEY:conference:ID, KEY:number:NUMBER or KEY:sip:ADDRESS"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-number", "+4681=sh op"],
         #"--sip-number: "+4681=sh op" has application key "sh op", which is not 1-64 bytes of A-Z a-z 0-9 - _"#),
        (["--sip-listen", "127.0.0.1:5060", "--sip-number", "+4681=a:user:x", "--sip-number", "4681=b"],
         "--sip-number: +4681 has more than one rule"),
        (["--sip-number", "+4681=shop"], "--sip-number needs --sip-listen (calls reach numbers over SIP)"),
        (["--sip-listen", "127.0.0.1:5060", "--sip-number"], "--sip-number needs a value (NUMBER=KEY[:user:ID|:conference:ID|:number:+E164|:sip:USER@DOMAIN])"),
    ])
    func badRulesAreRefusedAtStartClearly(_ arguments: [String], _ expected: String) {
        #expect(error(arguments) == expected)
    }

    @Test func errorsInTheFileAndTheEnvironmentNameTheirSource() {
        #expect(error(["--config", "/p.json"], files: ["/p.json": #"{"sipListen": "127.0.0.1:5060", "sipNumber": ["4681=k", 5]}"#])
                == #""sipNumber" in /p.json: expected an array of strings"#)
        #expect(error(["--config", "/p.json"], files: ["/p.json": #"{"sipListen": "127.0.0.1:5060", "sipNumber": ["4681=k:user"]}"#])
                == #""sipNumber" in /p.json: "4681=k:user" does not end in KEY, KEY:user:ID, KEY:conference:ID, KEY:number:NUMBER or KEY:sip:ADDRESS"#)
        #expect(error(["--sip-listen", "127.0.0.1:5060"], environment: ["PARLEY_SIP_NUMBER": "4681=k,,4682=k"])
                == #"PARLEY_SIP_NUMBER: "" is not NUMBER=KEY, NUMBER=KEY:user:ID, NUMBER=KEY:conference:ID, NUMBER=KEY:number:NUMBER or NUMBER=KEY:sip:ADDRESS"#)
    }

    @Test func theUsageListsTheOption() {
        let text = DaemonUsage.text
        #expect(text.contains("--sip-number NUMBER=KEY[:user:ID|:conference:ID|:number:+E164|:sip:USER@DOMAIN]"))
        #expect(text.contains("PARLEY_SIP_NUMBER; sipNumber; default none"))
    }
}
