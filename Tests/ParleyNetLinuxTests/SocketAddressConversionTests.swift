import Testing
import ParleyNetCore
@testable import ParleyNetLinux

@Suite struct SocketAddressConversionTests {
    @Test func roundTripsThroughSockaddr() throws {
        for text in ["127.0.0.1:40000", "0.0.0.0:0", "255.255.255.255:65535", "[::1]:1", "[2001:db8::8:800:200c:417a]:3478"] {
            let address = try SocketAddress(parsing: text)
            let back = address.withStorage { pointer, _ in SocketAddress(UnsafeRawPointer(pointer)) }
            #expect(back == address)
            #expect(back?.description == text)
        }
    }
}
