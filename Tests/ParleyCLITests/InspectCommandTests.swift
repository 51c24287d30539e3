import Testing
import Foundation
import ParleyTestSupport

/// `parley inspect` driven as a separate process: flags, input handling and the
/// promise that invalid input gives one line on stderr and status 2, never a crash.
@Suite struct InspectCommandTests {
    @Test func helpExitsZero() throws {
        let result = try ParleyProcess.run(["inspect", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("usage: parley inspect"))
    }

    @Test(arguments: [
        (["inspect"], "missing format"),
        (["inspect", "xml"], "unknown format 'xml'"),
        (["inspect", "rtp", "--frobnicate"], "unknown option '--frobnicate'"),
        (["inspect", "rtp", "--password", "x"], "--password applies only to stun"),
        (["inspect", "stun", "--password"], "--password needs a value"),
        (["inspect", "rtp", "--telephone-event", "200"], "payload type from 0 to 127"),
        (["inspect", "rtcp", "--telephone-event", "101"], "--telephone-event applies only to rtp"),
        (["inspect", "sdp", "/nonexistent/file.sdp"], "no such file"),
        (["inspect", "sdp", "/"], "not a readable file"),
        (["inspect", "stun", "a", "b"], "more than one input file"),
        (["frobnicate"], "unknown command"),
    ])
    func usageErrorsAreOneLineWithStatus2(arguments: [String], message: String) throws {
        let result = try ParleyProcess.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message))
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stdout.isEmpty)
    }

    @Test func badHexIsRejected() throws {
        let result = try ParleyProcess.run(["inspect", "rtp", "--hex"], stdin: Array("80 0g".utf8))
        #expect(result.status == 2)
        #expect(result.stderr.contains("invalid hex at character"))
        let odd = try ParleyProcess.run(["inspect", "rtp", "--hex"], stdin: Array("800".utf8))
        #expect(odd.status == 2)
        #expect(odd.stderr.contains("odd number of hex digits"))
    }

    @Test func oversizedInputIsRefused() throws {
        let result = try ParleyProcess.run(["inspect", "sdp"], stdin: [UInt8](repeating: 0x41, count: (16 << 20) + 10))
        #expect(result.status == 2)
        #expect(result.stderr.contains("larger than"))
    }

    /// Hostile input for every format: empty, random bytes, random hex. The process
    /// must exit 0 (it happened to parse) or 2 with exactly one line; never crash.
    @Test(arguments: ["stun", "rtp", "rtcp", "sdp", "ws", "signaling"])
    func hostileInputNeverCrashes(format: String) throws {
        var generator = SeededGenerator(seed: 0x5eed_0000 &+ UInt64(format.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
        var inputs: [[UInt8]] = [[], [0], [0xff, 0xff]]
        for _ in 0..<12 {
            let count = Int.random(in: 1...300, using: &generator)
            inputs.append((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        for input in inputs {
            let result = try ParleyProcess.run(["inspect", format], stdin: input)
            #expect(result.status == 0 || result.status == 2, "status \(result.status) for \(input.count) bytes")
            if result.status == 2 {
                #expect(result.stderr.split(separator: "\n").count == 1)
            }
        }
    }
}

