import Foundation
import PushKit
@_spi(ParleyEngines) import ParleySDKCore
@testable import ParleySDKAppleChecked
import Testing

/// `ParleyManagedPush` over the PushKit mirror (declarations only: the test plays
/// PushKit by calling the delegate methods PushKit calls).
@Suite struct ManagedPushTests {
    final class Heard: ParleyManagedPushDelegate, @unchecked Sendable {
        // @unchecked: `pushes` only under `lock`.
        let lock = NSLock()
        var pushes: [(payload: [AnyHashable: Any], type: String)] = []
        func managedPush(_ managedPush: ParleyManagedPush, didReceiveIncomingPushWithPayload payload: [AnyHashable: Any], for type: String) {
            lock.withLock { pushes.append((payload, type)) }
        }
    }

    @Test func tokensGoToTheHubAsHexAndAnInvalidationClearsThem() {
        let hub = ManagedPushTokens()
        let push = ParleyManagedPush(apsEnvironment: .sandbox, appId: "com.example.chat", queue: .main, tokens: hub)
        let registry = PKPushRegistry(queue: nil)
        push.setDesiredPushType(ParleyManagedPush.typeVoIP)
        push.pushRegistry(registry, didUpdate: PKPushCredentials(mirrorToken: Data([0xAB, 0x01, 0xFF]), type: .voIP), for: .voIP)
        #expect(hub.current == .init(type: .apnsVoip, token: "ab01ff", environment: .sandbox, appId: "com.example.chat"))
        push.pushRegistry(registry, didInvalidatePushTokenFor: .voIP)
        #expect(hub.current == nil)
    }

    @Test func aVoIPPushReachesTheDelegateBeforePushKitsCompletion() {
        let push = ParleyManagedPush(apsEnvironment: .production, appId: "com.example.chat", queue: .main, tokens: ManagedPushTokens())
        let heard = Heard()
        push.delegate = heard
        let completed = NSLock()
        nonisolated(unsafe) var heardAtCompletion = -1
        push.pushRegistry(PKPushRegistry(queue: nil),
                          didReceiveIncomingPushWith: PKPushPayload(mirrorDictionaryPayload: ["parley": "a.b.c"], type: .voIP),
                          for: .voIP) {
            completed.withLock { heardAtCompletion = heard.lock.withLock { heard.pushes.count } }
        }
        #expect(completed.withLock { heardAtCompletion } == 1, "the delegate ran before the completion")
        #expect(heard.lock.withLock { heard.pushes.first?.type } == ParleyManagedPush.typeVoIP)
    }
}
