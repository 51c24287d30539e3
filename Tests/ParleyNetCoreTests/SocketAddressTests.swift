import Testing
@testable import ParleyNetCore

@Suite struct SocketAddressTests {
    @Test func parsesAndPrintsIPv4() throws {
        let address = try SocketAddress(parsing: "1.2.3.4:5")
        #expect(address.family == .ipv4)
        #expect(address.port == 5)
        #expect(address.hostBytes == [1, 2, 3, 4])
        #expect(address.description == "1.2.3.4:5")
        #expect(address == SocketAddress(ipv4: 1, 2, 3, 4, port: 5))
    }

    @Test func parsesAndPrintsIPv6InRFC5952Form() throws {
        let loopback = try SocketAddress(parsing: "[::1]:5")
        #expect(loopback.family == .ipv6)
        #expect(loopback == .ipv6Loopback(port: 5))
        #expect(loopback.description == "[::1]:5")
        let long = try SocketAddress(parsing: "[2001:0DB8:0000:0000:0000:0000:0000:0001]:65535")
        #expect(long.description == "[2001:db8::1]:65535")
        #expect(long.hostBytes == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
        let mapped = try SocketAddress(parsing: "[::ffff:1.2.3.4]:9")
        #expect(mapped.family == .ipv6)
        #expect(mapped != SocketAddress(ipv4: 1, 2, 3, 4, port: 9))
    }

    @Test(arguments: [
        "", "1.2.3.4", "1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:-1", "1.2.3.4:+5", "1.2.3:5", "256.1.1.1:5",
        "::1:5", "[::1]", "[::1]5", "[::1:5", "[1.2.3.4]:5", "host:5", "[fe80::1%eth0]:5", "1.2.3.4:5x",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: NetError.self) { try SocketAddress(parsing: text) }
        do { _ = try SocketAddress(parsing: text) } catch { #expect(error.isInvalidAddress) }
    }

    @Test func hostBytesAndPortHelpers() throws {
        #expect(SocketAddress(hostBytes: [1, 2, 3], port: 1) == nil)
        let address = try #require(SocketAddress(host: "10.0.0.1", port: 80))
        #expect(address.withPort(81).description == "10.0.0.1:81")
        #expect(SocketAddress(host: "::", port: 3) == .ipv6Any(port: 3))
        #expect(SocketAddress(host: "example.org", port: 3) == nil)
        let set: Set<SocketAddress> = [.ipv4Loopback(port: 1), .ipv4Loopback(port: 1), .ipv6Loopback(port: 1)]
        #expect(set.count == 2)
    }
}
