import Foundation
import ParleySDKApple
import ParleySDKCore
import Testing

/// What can be checked of the URLSession transport off Apple platforms: it keeps the
/// transport contract when the connection cannot be made (here every URLSession WebSocket
/// task fails: Debian's libcurl has no WebSocket support; a port nobody listens on fails
/// the same way where it has).
@Suite struct URLSessionSignalingTransportTests {
    final class Events: @unchecked Sendable {
        // @unchecked: `list` only under `lock`.
        private let lock = NSLock()
        private var list: [ParleySignalingTransportEvent] = []
        func append(_ event: ParleySignalingTransportEvent) { lock.lock(); list.append(event); lock.unlock() }
        var all: [ParleySignalingTransportEvent] { lock.lock(); defer { lock.unlock() }; return list }
    }

    @Test func aConnectionThatCannotBeMadeFailsOnceAndFinishes() throws {
        let endpoint = try ParleyServerEndpoint(parsing: "http://127.0.0.1:9")
        let events = Events()
        let transport = URLSessionSignalingTransport(endpoint: endpoint) { events.append($0) }
        #expect(!transport.send("{}"), "nothing is sent before the connection opens")
        transport.open()
        #expect(transport.finished.wait(timeout: .now() + 15) == .success, "the transport never finished")
        let seen = events.all
        #expect(seen.count == 1, "\(seen)")
        guard case .failed(let message)? = seen.first else {
            Issue.record("expected one failure, got \(seen)")
            return
        }
        #expect(message.hasPrefix("ws://127.0.0.1:9/v1/ws: "))
        #expect(!transport.send("{}"))
        transport.close(code: 1000)   // after the end: harmless, reports nothing
        Thread.sleep(forTimeInterval: 0.1)
        #expect(events.all.count == 1)
    }

    @Test func closingBeforeOpeningReportsNothing() throws {
        let endpoint = try ParleyServerEndpoint(parsing: "https://calls.example.com")
        let events = Events()
        let transport = URLSessionSignalingTransport(endpoint: endpoint) { events.append($0) }
        transport.close(code: 1000)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(events.all.isEmpty)
    }
}
