import Testing
@testable import ParleyNet

@Suite struct PortRangeAllocatorTests {
    @Test func allocatesRoundRobinAndReusesReleasedPortsLast() throws {
        var allocator = try PortRangeAllocator(range: 40_000...40_003)
        #expect(try allocator.allocate() == 40_000)
        #expect(try allocator.allocate() == 40_001)
        let released40_000 = allocator.release(40_000)
        #expect(released40_000)
        let released40_000n = allocator.release(40_000)
        #expect(!released40_000n)
        // 40000 is free again but comes after the untouched ports.
        #expect(try allocator.allocate() == 40_002)
        #expect(try allocator.allocate() == 40_003)
        #expect(try allocator.allocate() == 40_000)
        #expect(allocator.availableCount == 0)
        #expect(throws: NetError.self) { try allocator.allocate() }
        do { _ = try allocator.allocate() } catch { #expect(error.isPortsExhausted) }
        let released40_002 = allocator.release(40_002)
        #expect(released40_002)
        #expect(try allocator.allocate() == 40_002)
        #expect(allocator.allocatedCount == 4)
        let released1234n = allocator.release(1234)
        #expect(!released1234n)
    }

    @Test func singlePortAndFullRanges() throws {
        var one = try PortRangeAllocator(range: 65_535...65_535)
        #expect(try one.allocate() == 65_535)
        #expect(throws: NetError.self) { try one.allocate() }
        #expect(throws: NetError.self) { try PortRangeAllocator(range: 0...10) }
        var all = try PortRangeAllocator(range: 1...65_535)
        for _ in 0..<65_535 { _ = try all.allocate() }
        #expect(all.availableCount == 0)
        #expect(throws: NetError.self) { try all.allocate() }
    }
}

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
