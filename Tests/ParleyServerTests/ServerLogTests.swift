import Synchronization
import Testing

@testable import ParleyServer

@Suite struct ServerLogTests {
    @Test func linesCarryLevelEventAndQuotedFields() {
        let lines = Mutex<[String]>([])
        let log = ServerLog(level: .info) { line in lines.withLock { $0.append(line) } }
        log.debug("hidden", ["call": "x"])
        log.info("call.start", ["call": "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13", "reason": "said \"no\" = bye\n"])
        let written = lines.withLock { $0 }
        #expect(written.count == 1)
        let line = written[0]
        // 2026-12-01T19:20:00.123Z
        #expect(line.utf8.count > 25)
        #expect(line.dropFirst(24).hasPrefix(" info call.start call=6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13 reason="))
        #expect(line.hasSuffix(#"reason="said \"no\" = bye\n""#))
    }

    @Test func levelsOrder() {
        #expect(LogLevel.debug < .info && LogLevel.info < .warning && LogLevel.warning < .error)
    }
}
