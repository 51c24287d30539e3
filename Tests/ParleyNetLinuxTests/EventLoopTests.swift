import Testing
import Glibc
import Dispatch
import ParleyNetCore
@testable import ParleyNetLinux

/// An actor whose methods run on an event loop.
actor LoopBoundCounter {
    let loop: EventLoop
    var count = 0
    init(loop: EventLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    func increment() -> (Int, Bool) {
        count += 1
        return (count, loop.inEventLoop)
    }
    func register(_ socket: UDPSocket) -> Bool {
        (try? loop.register(socket) {}) != nil
    }
}

extension LoopbackTests {
    @Suite struct EventLoopTests {
        @Test func executeFromManyThreadsRunsOnTheLoopInPerThreadOrder() throws {
            let loop = try EventLoop()
            defer { loop.shutdown() }
            #expect(!loop.inEventLoop)
            let threads = 4, perThread = 1000
            let log = Locked([[Int]](repeating: [], count: threads))
            let offLoop = Locked(0)
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for i in 0..<perThread {
                    loop.execute {
                        if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
                        log.withLock { $0[thread].append(i) }
                    }
                }
            }
            #expect(waitUntil { log.value.allSatisfy { $0.count == perThread } })
            #expect(log.value.allSatisfy { $0 == Array(0..<perThread) })
            #expect(offLoop.value == 0)
        }

        /// A timer armed on the loop thread (the first one, so the loop's sleep is
        /// recomputed) must not swallow the wake-up of work sent later from another
        /// thread: that work ran only when the far timer fired.
        @Test func workFromAnotherThreadRunsPromptlyAfterTheLoopArmedAFarTimer() throws {
            let loop = try EventLoop()
            defer { loop.shutdown() }
            let armed = Locked(false)
            loop.execute {
                loop.schedule(after: .seconds(60)) {}
                armed.withLock { $0 = true }
            }
            #expect(waitUntil { armed.value })
            usleep(50_000)  // let the loop go back to sleep
            let ran = Locked(false)
            let start = ContinuousClock.now
            loop.execute { ran.withLock { $0 = true } }
            #expect(waitUntil { ran.value })
            #expect(ContinuousClock.now - start < .seconds(2))
            let nested = Locked(false)
            loop.execute { loop.execute { nested.withLock { $0 = true } } }
            #expect(waitUntil { nested.value })
        }

        @Test func timersFireInDeadlineOrderAndCancelledOnesDoNot() throws {
            let loop = try EventLoop()
            defer { loop.shutdown() }
            let fired = Locked([String]())
            let start = ContinuousClock.now
            let plan: [(String, Int)] = [("d", 60), ("a", 10), ("c", 40), ("b1", 20), ("b2", 20), ("x", 30), ("e", 80)]
            var ids: [String: TimerID] = [:]
            for (name, ms) in plan {
                ids[name] = loop.schedule(at: start.advanced(by: .milliseconds(ms))) {
                    fired.withLock { $0.append(name) }
                }
            }
            #expect(loop.cancel(ids["x"]!))
            #expect(loop.pendingTimerCount == 6)
            #expect(waitUntil { fired.value.count == 6 })
            #expect(fired.value == ["a", "b1", "b2", "c", "d", "e"])
            #expect(!loop.cancel(ids["a"]!)) // already fired
            #expect(loop.pendingTimerCount == 0)

            // Scheduled from the loop itself, and with a past deadline.
            loop.execute {
                loop.schedule(after: .milliseconds(5)) { fired.withLock { $0.append("inner") } }
                loop.schedule(at: start) { fired.withLock { $0.append("late") } }
            }
            #expect(waitUntil { fired.value.count == 8 })
            #expect(fired.value.suffix(2) == ["late", "inner"])
        }

        @Test func idleLoopSleepsUntilItsTimer() throws {
            let loop = try EventLoop()
            defer { loop.shutdown() }
            let done = Locked(false)
            let iterationsBefore = loop.iterations.load(ordering: .relaxed)
            loop.schedule(after: .milliseconds(200)) { done.withLock { $0 = true } }
            #expect(waitUntil { done.value })
            // A spinning loop would have gone round thousands of times; a sleeping one a few.
            #expect(loop.iterations.load(ordering: .relaxed) - iterationsBefore < 20)
        }

        @Test func socketsRegisteredOnTheLoopDeliverOnTheLoop() throws {
            let loop = try EventLoop()
            let server = try UDPSocket(bindingTo: .ipv6Loopback(port: 0))
            let client = try UDPSocket(bindingTo: .ipv6Loopback(port: 0))
            defer { client.close() }
            let got = Locked([Int]())
            loop.execute {
                let batch = UDPReceiveBatch()
                try? loop.register(server) {
                    precondition(loop.inEventLoop)
                    while let n = try? server.receive(into: batch), n > 0 {
                        let sequences = (0..<n).compactMap { checkedSequence(batch.payload(at: $0)) }
                        got.withLock { $0 += sequences }
                    }
                }
            }
            #expect(waitUntil { loop.isRegisteredCount(1) })
            for i in 0..<10 { try client.send(testDatagram(i), to: server.localAddress) }
            #expect(waitUntil { got.value.count == 10 })
            #expect(got.value == Array(0..<10))
            loop.execute { loop.deregister(server) }
            #expect(waitUntil { loop.isRegisteredCount(0) })
            loop.shutdown()
            // Deregistered: not the loop's to close.
            #expect(!server.isClosed)
            server.close()
            #expect(loop.execute {} == false)
        }

        @Test func writableInterestCallsUntilTurnedOff() throws {
            let loop = try EventLoop()
            defer { loop.shutdown() }
            let socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            let writableCalls = Locked(0)
            loop.execute {
                try? loop.register(socket, onReadable: {}, onWritable: {
                    writableCalls.withLock { $0 += 1 }
                    try? loop.setWritableInterest(socket, false)
                })
            }
            #expect(waitUntil { loop.isRegisteredCount(1) })
            #expect(writableCalls.value == 0) // not asked for yet
            loop.execute { try? loop.setWritableInterest(socket, true) }
            #expect(waitUntil { writableCalls.value == 1 })
            // Turned off inside the handler: a few more loop round trips add no call.
            for _ in 0..<3 { _ = loop.isRegisteredCount(1) }
            #expect(writableCalls.value == 1)
        }

        /// A task that resumes on an actor of a loop after the loop shut down (a statistics
        /// refresh racing a hang-up) still runs, isolated, one job at a time, instead of
        /// crashing the process.
        @Test func actorJobsAfterShutdownRunInTheAfterlife() async throws {
            let loop = try EventLoop(name: "afterlife-test")
            let counter = LoopBoundCounter(loop: loop)
            #expect(await counter.increment() == (1, true))
            loop.shutdown()
            let results = await withTaskGroup(of: (Int, Bool).self) { group in
                for _ in 0..<20 { group.addTask { await counter.increment() } }
                var all: [(Int, Bool)] = []
                for await result in group { all.append(result) }
                return all
            }
            #expect(results.map(\.0).sorted() == Array(2...21))
            #expect(results.allSatisfy { $0.1 })
            // Registering on a stopped loop fails cleanly.
            let socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
            defer { socket.close() }
            let registered = await counter.register(socket)
            #expect(!registered)
        }

        @Test func actorsCanRunOnTheLoop() async throws {
            let loop = try EventLoop()
            let counter = LoopBoundCounter(loop: loop)
            for expected in 1...3 {
                let (count, onLoop) = await counter.increment()
                #expect(count == expected)
                #expect(onLoop)
            }
            loop.shutdown()
        }
    }
}

extension EventLoop {
    /// Reads the registration count through the loop (tests only).
    func registeredCountFromOutside() -> Int {
        let result = Locked(-1)
        execute { let n = self.registeredSocketCount; result.withLock { $0 = n } }
        waitUntil { result.value >= 0 }
        return result.value
    }

    func isRegisteredCount(_ n: Int) -> Bool { registeredCountFromOutside() == n }
}

/// Tests that count what the whole process holds (descriptors), so they run in `make
/// test`'s one-at-a-time pass (`--filter SoloTests`) with nothing else running beside them.
@Suite(.serialized) enum SoloTests {}

extension SoloTests {
    @Suite struct EventLoopDescriptorTests {
            @Test func shutdownClosesEverythingAndLeaksNoDescriptor() throws {
                let before = openDescriptorCount()
                var socketTargets: [String] = []
                do {
                    let group = try EventLoopGroup(loopCount: 2)
                    #expect(group.loops.count == min(2, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
                    let pool = try PortPool(host: .ipv4Loopback(port: 0), range: 46_100...46_199)
                    var sockets: [UDPSocket] = []
                    for i in 0..<6 {
                        let socket = i % 2 == 0 ? try pool.openSocket() : try UDPSocket(bindingTo: .ipv6Loopback(port: 0))
                        sockets.append(socket)
                        socketTargets.append(descriptorTarget(socket.fileDescriptor) ?? "?")
                        let loop = group.next()
                        loop.execute { try? loop.register(socket) {} }
                    }
                    #expect(socketTargets.allSatisfy { $0.hasPrefix("socket:[") })
                    #expect(openDescriptorCount() >= before + 6 + 2 * group.loops.count)
                    #expect(waitUntil { group.loops.reduce(0) { $0 + $1.registeredCountFromOutside() } == 6 })
                    group.shutdown()
                    group.shutdown() // idempotent
                    #expect(sockets.allSatisfy { $0.isClosed })
                    #expect(pool.allocatedCount == 0)
                }
                for target in socketTargets { #expect(noDescriptor(refersTo: target)) }
                // The whole process's count: this suite runs alone (SoloTests), so nothing else
                // opens or holds descriptors meanwhile.
                #expect(waitUntil(timeout: .seconds(2)) { openDescriptorCount() <= before })
            }
    }
}
