import Testing
import Glibc
@testable import ParleyNetCore
@testable import ParleyNetLinux

/// Every test that opens descriptors runs serialized, so descriptor counts mean something.
@Suite(.serialized) struct LoopbackTests {}

extension LoopbackTests {
    @Suite struct UDPSocketTests {
        @Test(arguments: [SocketAddress.ipv4Loopback(port: 0), .ipv6Loopback(port: 0)])
        func batchedSendAndReceive(_ loopback: SocketAddress) throws {
            let server = try UDPSocket(bindingTo: loopback)
            let client = try UDPSocket(bindingTo: loopback)
            defer { server.close(); client.close() }
            #expect(server.localAddress.port != 0)
            #expect(server.localAddress.family == loopback.family)

            let queue = UDPSendQueue(capacity: 32)
            for i in 0..<32 { #expect(try queue.enqueue(testDatagram(i), to: server.localAddress)) }
            #expect(queue.isFull)
            #expect(try queue.enqueue(testDatagram(99), to: server.localAddress) == false)
            let result = client.flush(queue)
            #expect(result.sent == 32 && result.dropped == 0 && !result.wouldBlock)
            #expect(queue.isEmpty)

            let batch = UDPReceiveBatch(capacity: 64)
            let received = try receiveDatagrams(server, batch, expected: 32)
            #expect(received.count == 32)
            for (index, (bytes, source)) in received.enumerated() {
                #expect(bytes.withUnsafeBytes { checkedSequence($0) } == index)
                #expect(source == client.localAddress)
            }

            // Echo one back with the single-datagram calls.
            #expect(try server.send(received[5].0, to: client.localAddress))
            var buffer = [UInt8](repeating: 0, count: 2048)
            var echo: (count: Int, source: SocketAddress)?
            waitUntil { echo = buffer.withUnsafeMutableBytes { try? client.receive(into: $0) } ?? nil; return echo != nil }
            #expect(echo?.count == 172)
            #expect(echo?.source == server.localAddress)
            #expect(buffer.withUnsafeBytes { checkedSequence(UnsafeRawBufferPointer(rebasing: $0[..<172])) } == 5)
            #expect(try client.receive(into: batch) == 0)
        }

        @Test func tenThousandDatagramsArriveIntactThroughALoop() throws {
            let loop = try EventLoop(name: "test-10k")
            defer { loop.shutdown() }
            let server = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: .init(receiveBufferSize: 1 << 20))
            let client = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            defer { client.close() }
            let total = 10_000
            let seen = Locked([Bool](repeating: false, count: total))
            let counts = Locked((received: 0, corrupt: 0, duplicate: 0))
            let registered = Locked(false)
            loop.execute {
                let batch = UDPReceiveBatch(capacity: 64)
                try? loop.register(server) {
                    // Bounded drain: at most 8 batches per wake-up, the loop calls again.
                    for _ in 0..<8 {
                        guard let n = try? server.receive(into: batch), n > 0 else { return }
                        var good = 0, corrupt = 0, duplicate = 0
                        seen.withLock { seen in
                            for i in 0..<n {
                                guard let sequence = checkedSequence(batch.payload(at: i)), sequence < total else { corrupt += 1; continue }
                                if seen[sequence] { duplicate += 1 } else { seen[sequence] = true; good += 1 }
                            }
                        }
                        counts.withLock { $0.received += good; $0.corrupt += corrupt; $0.duplicate += duplicate }
                    }
                }
                registered.withLock { $0 = true }
            }
            #expect(waitUntil { registered.value })

            // Windowed sender: never more than 256 datagrams ahead of the receiver, so the
            // receive buffer cannot overflow and loopback loses nothing.
            let queue = UDPSendQueue(capacity: 64)
            var next = 0
            let finished = waitUntil(timeout: .seconds(8)) {
                while next < total && next - counts.value.received < 256 {
                    while next < total && !queue.isFull { _ = try? queue.enqueue(testDatagram(next), to: server.localAddress); next += 1 }
                    if client.flush(queue).wouldBlock { return false }
                }
                return counts.value.received == total
            }
            #expect(finished)
            let final = counts.value
            #expect(final.received == total)
            #expect(final.corrupt == 0 && final.duplicate == 0)
            #expect(seen.value.allSatisfy { $0 })
        }

        @Test func oversizedDatagramsAreReportedAsEMSGSIZE() throws {
            let server = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            let client = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            defer { server.close(); client.close() }
            let huge = [UInt8](repeating: 0x80, count: 65_530) // > 65,507: no IPv4 UDP payload fits
            do {
                try client.send(huge, to: server.localAddress)
                Issue.record("sendto of 65530 bytes succeeded")
            } catch {
                #expect(error.errnoName == "EMSGSIZE")
                #expect(error.isMessageTooLarge)
                #expect(error.operation?.hasPrefix("sendto") == true)
                #expect(error.description.contains("EMSGSIZE"))
            }
            // In a batch, the oversized one is dropped and reported; the others go out.
            let queue = UDPSendQueue(capacity: 4, slotSize: 65_536)
            try queue.enqueue(testDatagram(1), to: server.localAddress)
            try queue.enqueue(huge, to: server.localAddress)
            try queue.enqueue(testDatagram(2), to: server.localAddress)
            let result = client.flush(queue)
            #expect(result.sent == 2 && result.dropped == 1)
            #expect(result.lastError?.errnoName == "EMSGSIZE")
            let received = try receiveDatagrams(server, UDPReceiveBatch(), expected: 2)
            #expect(received.map { $0.0.withUnsafeBytes { checkedSequence($0) } } == [1, 2])
            // A queue slot refuses what does not fit.
            #expect(throws: NetError.self) { try UDPSendQueue(capacity: 1, slotSize: 100).enqueue(huge, to: server.localAddress) }
        }

        @Test func truncatedDatagramsAreFlagged() throws {
            let server = try UDPSocket(bindingTo: .ipv6Loopback(port: 0))
            let client = try UDPSocket(bindingTo: .ipv6Loopback(port: 0))
            defer { server.close(); client.close() }
            try client.send([UInt8](repeating: 0x80, count: 100), to: server.localAddress)
            try client.send([UInt8](repeating: 0x81, count: 10), to: server.localAddress)
            let batch = UDPReceiveBatch(capacity: 4, slotSize: 64)
            #expect(waitUntil { batch.count == 2 || ((try? server.receive(into: batch)) ?? 0) == 2 })
            #expect(batch.payload(at: 0).count == 64 && batch.isTruncated(at: 0))
            #expect(batch.payload(at: 1).count == 10 && !batch.isTruncated(at: 1))
        }

        @Test func optionsAndBindErrors() throws {
            let options = UDPSocket.Options(reusePort: true, receiveBufferSize: 1 << 20, sendBufferSize: 1 << 19)
            let first = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: options)
            defer { first.close() }
            // Linux reports double the request, capped by rmem_max/wmem_max: only check it grew.
            #expect(first.receiveBufferSize > 212_992 / 2)
            #expect(first.sendBufferSize > 0)
            // SO_REUSEPORT on both: a second socket may share the port.
            let second = try UDPSocket(bindingTo: first.localAddress, options: options)
            second.close()
            #expect(second.isClosed)
            second.close() // idempotent
            // Without it, the port is taken.
            do {
                _ = try UDPSocket(bindingTo: first.localAddress)
                Issue.record("second bind succeeded")
            } catch {
                #expect(error.isAddressInUse)
                #expect(error.errnoName == "EADDRINUSE")
            }
            // IPV6_V6ONLY: a v6 socket on the same port number as a v4 one binds fine.
            let v6 = try UDPSocket(bindingTo: .ipv6Any(port: first.localAddress.port), options: options)
            v6.close()
            do {
                _ = try UDPSocket(bindingTo: SocketAddress(ipv4: 192, 0, 2, 1, port: 0))
                Issue.record("bind to a foreign address succeeded")
            } catch {
                #expect(error.errnoName == "EADDRNOTAVAIL")
            }
        }
    }
}
