import Foundation
import ParleyVoiceAPI
import Testing

/// docs/backend.md states the signing example and the replay window; they must stay what
/// the code does.
@Suite struct BackendDocumentationTests {
    static func backendPage() throws -> String {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return try String(contentsOfFile: components.joined(separator: "/") + "/docs/backend.md", encoding: .utf8)
    }

    @Test func thePageShowsTheVectorTheSignerReproduces() throws {
        let page = try Self.backendPage()
        for text in [SinchCallbackExample.applicationKey, SinchCallbackExample.applicationSecret, SinchCallbackExample.body,
                     SinchCallbackExample.contentMD5, SinchCallbackExample.signature, SinchCallbackExample.path,
                     "x-timestamp: \(SinchCallbackExample.timestamp)"] {
            #expect(page.contains(text), "docs/backend.md lacks \(text)")
        }
    }

    @Test func thePageStatesTheReplayWindow() throws {
        let page = try Self.backendPage()
        #expect(SinchRequestVerifier.defaultReplayWindowSeconds == 15 * 60)
        #expect(page.contains("**15 minutes**") && page.contains("900 s"))
    }
}
