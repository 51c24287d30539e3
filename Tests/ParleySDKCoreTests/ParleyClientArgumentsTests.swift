import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import Testing

/// What `ParleyClient.init` and `setPushNotificationDisplayName` accept, with no server.
@Suite struct ParleyClientArgumentsTests {
    func client(cli: String?) throws(ParleyClientError) -> ParleyClient {
        try ParleyClient(applicationKey: "app-1", environmentHost: "http://127.0.0.1:9", userId: "alice", cli: cli,
                         pushRegistrationStore: InMemoryPushRegistrationStore(), engines: TestEngines.make())
    }

    @Test func aCallerIDIsAnE164Number() throws {
        #expect(try client(cli: "+46701234567").cli == "+46701234567")
        #expect(try client(cli: nil).cli == nil)
        #expect(try client(cli: "+123456789012345").cli == "+123456789012345", "15 digits is the E.164 maximum")
        for bad in ["46701234567", "+", "+0701234567", "+46 70 123", "+1234567890123456", "+46-70", "", "+４６"] {
            #expect(throws: ParleyClientError.self, "\(bad)") { _ = try client(cli: bad) }
        }
        do { _ = try client(cli: "0701234567") } catch {
            #expect(error.code == "invalid_argument" && error.message.contains("E.164"))
        }
    }

    @Test func displayNamesAreCleanedAndCut() throws {
        let client = try client(cli: nil)
        #expect(client.pushNotificationDisplayName == nil)
        client.setPushNotificationDisplayName("  Alice\tÖdman\u{7F} ")
        #expect(client.pushNotificationDisplayName == "Alice Ödman")
        // 100 family emoji of 25 bytes each: cut to whole characters within 255 bytes.
        client.setPushNotificationDisplayName(String(repeating: "👨‍👩‍👧‍👦", count: 100))
        #expect(client.pushNotificationDisplayName == String(repeating: "👨‍👩‍👧‍👦", count: 10))
        client.setPushNotificationDisplayName("\n\n")
        #expect(client.pushNotificationDisplayName == nil)
    }
}
