import Foundation
@_spi(ParleyEngines) @testable import ParleySDKCore
import Testing

/// What the guides print, `error.localizedDescription`, carries the SDK's message rather
/// than Foundation's "The operation could not be completed".
@Suite struct ErrorDescriptionTests {
    @Test func callErrorsReadAsTheirMessage() {
        let error: any Error = ParleyCallError(code: "destination_not_found", message: "destination user not found")
        #expect(error.localizedDescription == "Call failed: destination user not found")
        let bare: any Error = ParleyCallError(code: "media_failed", message: "")
        #expect(bare.localizedDescription == "Call failed: media_failed")
    }

    @Test func clientErrorsReadAsTheirMessage() {
        let error: any Error = ParleyClientError(code: "server_unreachable", message: "server unreachable: connection refused")
        #expect(error.localizedDescription == "server unreachable: connection refused")
        let system: any Error = SystemCallError(.filteredByDoNotDisturb, "Do Not Disturb is on")
        #expect(system.localizedDescription == "Do Not Disturb is on")
    }
}
