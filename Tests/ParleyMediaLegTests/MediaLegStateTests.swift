import Testing
@testable import ParleyMediaLeg

@Suite struct MediaLegStateTests {
    @Test func descriptionIsRawValue() {
        #expect(MediaLegState.connected.description == "connected")
    }
}
