import Testing
import ParleyNetCore
@testable import ParleyNetLinux

extension LoopbackTests {
    @Suite struct PortPoolTests {
        @Test func oneSocketPerPortUntilExhaustedThenReleaseOnClose() throws {
            let pool = try PortPool(host: .ipv4Loopback(port: 0), range: 46_200...46_202)
            // A port held outside the pool is skipped.
            let squatter = try UDPSocket(bindingTo: .ipv4Loopback(port: 46_201))
            defer { squatter.close() }
            let a = try pool.openSocket()
            let b = try pool.openSocket()
            #expect(a.localAddress == .ipv4Loopback(port: 46_200))
            #expect(b.localAddress == .ipv4Loopback(port: 46_202))
            #expect(pool.allocatedCount == 2)
            do {
                _ = try pool.openSocket()
                Issue.record("pool should be exhausted")
            } catch {
                #expect(error.isPortsExhausted)
                #expect(error.description == "no free UDP port in 46200...46202")
            }
            a.close()
            #expect(pool.allocatedCount == 1)
            let c = try pool.openSocket()
            #expect(c.localAddress.port == 46_200)
            b.close()
            c.close()
            #expect(pool.availableCount == 3)
        }

        @Test func ipv6Pool() throws {
            let pool = try PortPool(host: .ipv6Loopback(port: 0), range: 46_300...46_309)
            let socket = try pool.openSocket()
            #expect(socket.localAddress.family == .ipv6)
            #expect((46_300...46_309).contains(socket.localAddress.port))
            socket.close()
            #expect(pool.allocatedCount == 0)
        }
    }
}
