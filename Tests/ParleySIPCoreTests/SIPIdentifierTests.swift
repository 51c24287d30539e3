import Testing
import ParleySIP
import ParleySIPCore
import ParleyTestSupport

/// The random identifiers: shape and independence.
@Suite struct SIPIdentifierTests {
    @Test func identifiersCarry128RandomBits() {
        var random = SeededGenerator(seed: 11)
        let branch = SIPIdentifier.branch(using: &random)
        #expect(branch.hasPrefix("z9hG4bK"))
        #expect(branch.utf8.count == 7 + 32)
        let tags = (0..<100).map { _ in SIPIdentifier.tag(using: &random) }
        #expect(Set(tags).count == 100)
        #expect(tags.allSatisfy { $0.utf8.count == 32 && $0.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } })
        #expect(SIPIdentifier.callID(host: "parley.example.test", using: &random).hasSuffix("@parley.example.test"))
        // Usable where SIP puts them.
        #expect((try? SIPParameter(name: "tag", value: tags[0])) != nil)
        #expect((try? SIPVia(transport: "UDP", host: .ipv4("192.0.2.1"), branch: branch))?.hasRFC3261Branch == true)
    }
}
