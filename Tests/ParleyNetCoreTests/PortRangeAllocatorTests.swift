import Testing
import ParleyNetCore

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
