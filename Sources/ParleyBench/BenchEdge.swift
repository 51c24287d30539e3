import Glibc
import Synchronization
import ParleyNetCore
import ParleyNetLinux
import ParleyEdgeIO
import ParleyWebSocketClientIO

/// WebSocket echo through a real `EdgeServer` over loopback: client threads keep a window
/// of messages in flight on one connection each; reports messages per second (wall) and
/// the CPU time of the server's loop threads per message. Clients and server share the
/// machine's cores, so compare the figures only with themselves.
func edgeEchoReport(seconds: Double, clientThreads: Int = 3, window: Int = 32, messageBytes: Int = 64) -> String {
    do {
        let configuration = EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], maxMessagesPerSecond: 1e12,
                                              messageBurst: 1 << 40)
        let route = WebSocketRoute(path: "/ws", onMessage: { socket, message in socket.send(message) })
        let server = try EdgeServer(configuration: configuration, handlers: EdgeHandlers(webSocket: route))
        defer { server.shutdown() }
        let address = server.localAddresses[0]
        let stop = Atomic<Bool>(false)
        let failures = Atomic<Int>(0)
        let payload = String(repeating: "m", count: messageBytes)
        var threads: [pthread_t] = []
        for _ in 0..<clientThreads {
            threads.append(startBenchThread {
                guard let client = try? WebSocketClient(connectingTo: address, path: "/ws") else {
                    failures.add(1, ordering: .relaxed)
                    return
                }
                do {
                    for _ in 0..<window { try client.send(.text(payload)) }
                    while !stop.load(ordering: .relaxed) {
                        guard case .message? = try client.receive(timeout: .seconds(5)) else { break }
                        try client.send(.text(payload))
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
                client.close(timeout: .milliseconds(500))
            })
        }
        func loopCPU() -> Double {
            let total = Mutex<(Double, Int)>((0, 0))
            for loop in server.group.loops {
                loop.execute { let cpu = threadCPUSeconds(); total.withLock { $0.0 += cpu; $0.1 += 1 } }
            }
            for _ in 0..<10_000 where total.withLock({ $0.1 }) < server.group.loops.count { usleep(100) }
            return total.withLock { $0.0 }
        }
        usleep(300_000) // warm-up
        let cpuStart = loopCPU(), countStart = server.statistics.messagesReceived
        var wallStart = timespec(), wallEnd = timespec()
        clock_gettime(CLOCK_MONOTONIC, &wallStart)
        usleep(UInt32(seconds * 1e6))
        let cpuEnd = loopCPU(), countEnd = server.statistics.messagesReceived
        clock_gettime(CLOCK_MONOTONIC, &wallEnd)
        stop.store(true, ordering: .relaxed)
        for thread in threads { pthread_join(thread, nil) }
        let wall = Double(wallEnd.tv_sec - wallStart.tv_sec) + Double(wallEnd.tv_nsec - wallStart.tv_nsec) / 1e9
        let messages = max(1, countEnd - countStart)
        let perMessage = (cpuEnd - cpuStart) / Double(messages) * 1e6
        return "edge WebSocket echo, \(clientThreads) client threads x 1 connection, \(window) in flight, \(messageBytes)-byte text, "
            + "\(server.group.loops.count) loops: \(Int(Double(messages) / wall)) msgs/s wall, "
            + "\((perMessage * 100).rounded() / 100) µs server loop CPU/message (receive + echo)"
            + (failures.load(ordering: .relaxed) > 0 ? ", \(failures.load(ordering: .relaxed)) client failures" : "")
    } catch {
        return "edge WebSocket echo failed: \(error)"
    }
}

private final class BenchThreadBox: @unchecked Sendable {
    // Handed to exactly one new thread, which takes it over.
    let work: @Sendable () -> Void
    init(_ work: @escaping @Sendable () -> Void) { self.work = work }
}

private func startBenchThread(_ work: @escaping @Sendable () -> Void) -> pthread_t {
    let context = Unmanaged.passRetained(BenchThreadBox(work)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { context in
        Unmanaged<BenchThreadBox>.fromOpaque(context!).takeRetainedValue().work()
        return nil
    }, context)
    precondition(created == 0, "pthread_create failed")
    return thread
}
