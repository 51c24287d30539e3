import Glibc
import ParleyNetCore
import ParleyNetLinux
import Synchronization

// UDP echo on loopback, 172-byte packets (an Opus RTP packet with header extensions and
// SRTP tag). A sender thread keeps a window of packets in flight to the echo socket and
// counts the echoes; the benchmark body IS the echo server's work for one packet, so the
// Harness's CPU time of the calling thread is the echo side's CPU per packet: receive +
// send syscalls, with `poll` sleeping (no CPU) whenever the batch runs dry.

private let packetSize = 172

/// Rows for the Harness: echo cost per packet, batched (recvmmsg/sendmmsg, 64) and
/// single (recvfrom/sendto).
func udpBenchmarks() -> [Benchmark] {
    let batched = UDPEchoRig()
    let batch = UDPReceiveBatch(capacity: 64)
    let queue = UDPSendQueue(capacity: 64)
    var index = 0
    let single = UDPEchoRig()
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)

    return [
        Benchmark(format: "udp", operation: "echo recvmmsg+sendmmsg, batch 64", messageBytes: packetSize) {
            batched.startSenderOnce()
            while index >= batch.count {
                if !queue.isEmpty { batched.echo.flush(queue) }
                index = 0
                if ((try? batched.echo.receive(into: batch)) ?? 0) == 0 { batched.waitReadable() }
            }
            _ = try? queue.enqueue(batch.payload(at: index), to: batch.source(at: index))
            index += 1
            if queue.isFull { batched.echo.flush(queue) }
            benchmarkSink &+= index
        },
        Benchmark(format: "udp", operation: "echo recvfrom+sendto", messageBytes: packetSize) {
            single.startSenderOnce()
            while true {
                if let (count, source) = try? single.echo.receive(into: buffer) {
                    _ = try? single.echo.send(UnsafeRawBufferPointer(rebasing: buffer[..<count]), to: source)
                    benchmarkSink &+= count
                    return
                }
                single.waitReadable()
            }
        },
    ]
}

/// Echo through a real ``EventLoop`` for `seconds` of wall time; reports packets per second
/// and the loop thread's CPU time per packet (CLOCK_THREAD_CPUTIME_ID read on the loop).
/// Not a Harness row because the work happens on the loop's thread, not the caller's.
func udpLoopEchoReport(seconds: Double) -> String {
    do {
        let loop = try EventLoop(name: "bench-udp")
        defer { loop.shutdown() }
        let rig = UDPEchoRig()
        let echoed = Atomic<Int>(0)
        let cpu = Mutex<Double?>(nil)
        loop.execute { [echo = rig.echo] in
            let batch = UDPReceiveBatch(capacity: 64)
            let queue = UDPSendQueue(capacity: 64)
            try? loop.register(echo, closeOnShutdown: false) {
                for _ in 0..<8 {
                    guard let n = try? echo.receive(into: batch), n > 0 else { break }
                    for i in 0..<n { _ = try? queue.enqueue(batch.payload(at: i), to: batch.source(at: i)) }
                    echo.flush(queue)
                    echoed.add(n, ordering: .relaxed)
                }
            }
        }
        func loopCPU() -> Double {
            cpu.withLock { $0 = nil }
            loop.execute { cpu.withLock { $0 = threadCPUSeconds() } }
            while true {
                if let value = cpu.withLock({ $0 }) { return value }
                usleep(100)
            }
        }
        rig.startSenderOnce()
        usleep(200_000) // warm-up
        let cpuStart = loopCPU(), countStart = echoed.load(ordering: .relaxed)
        var wallStart = timespec(), wallEnd = timespec()
        clock_gettime(CLOCK_MONOTONIC, &wallStart)
        usleep(UInt32(seconds * 1e6))
        let cpuEnd = loopCPU(), countEnd = echoed.load(ordering: .relaxed)
        clock_gettime(CLOCK_MONOTONIC, &wallEnd)
        rig.stopSender()
        let wall = Double(wallEnd.tv_sec - wallStart.tv_sec) + Double(wallEnd.tv_nsec - wallStart.tv_nsec) / 1e9
        let packets = max(1, countEnd - countStart)
        let perPacket = (cpuEnd - cpuStart) / Double(packets) * 1e6
        let pps = Double(packets) / wall
        let loopLoad = (cpuEnd - cpuStart) / wall * 100
        return "udp  EventLoop echo recvmmsg+sendmmsg batch 64: \(Int(pps)) packets/s wall, "
            + "\((perPacket * 100).rounded() / 100) µs loop CPU/packet (\(Int(1e6 / max(perPacket, 0.001))) packets per loop-CPU-second), loop thread \(Int(loopLoad))% busy"
    } catch {
        return "udp  EventLoop echo failed: \(error)"
    }
}

/// The echo socket and the sender thread that feeds it.
private final class UDPEchoRig {
    let echo: UDPSocket
    private let sender: UDPEchoSender
    private var started = false

    init() {
        let buffers = UDPSocket.Options(receiveBufferSize: 4 << 20, sendBufferSize: 4 << 20)
        do {
            echo = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: buffers)
            let client = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: buffers)
            sender = UDPEchoSender(client: client, target: echo.localAddress)
        } catch {
            fatalError("udp bench setup: \(error)")
        }
    }

    func startSenderOnce() {
        guard !started else { return }
        started = true
        sender.start()
    }

    func stopSender() { sender.stop.store(true, ordering: .relaxed) }

    /// Sleeps until the echo socket is readable (at most 100 ms per call).
    func waitReadable() {
        var descriptor = pollfd(fd: echo.fileDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 100)
    }
}

/// Keeps `window` packets in flight to the echo socket; re-primes after 100 ms of silence
/// (lost packets, or the benchmark body not running). Runs until `stop`.
private final class UDPEchoSender: Sendable {
    let client: UDPSocket
    let target: SocketAddress
    let stop = Atomic<Bool>(false)
    static let window = 256

    init(client: UDPSocket, target: SocketAddress) {
        self.client = client
        self.target = target
    }

    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<UDPEchoSender>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(created == 0, "pthread_create failed")
        pthread_detach(thread)
    }

    private func run() {
        let queue = UDPSendQueue(capacity: 64, slotSize: 256)
        let batch = UDPReceiveBatch(capacity: 64)
        var packet = [UInt8](repeating: 0, count: packetSize)
        packet[0] = 0x80
        packet[1] = 111
        var inFlight = 0
        while !stop.load(ordering: .relaxed) {
            while inFlight < UDPEchoSender.window {
                while inFlight + queue.count < UDPEchoSender.window && !queue.isFull {
                    _ = try? queue.enqueue(packet, to: target)
                }
                let result = client.flush(queue)
                inFlight += result.sent
                if result.wouldBlock || result.sent == 0 { break }
            }
            var descriptor = pollfd(fd: client.fileDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 100) == 0 {
                inFlight = 0
                continue
            }
            while let n = try? client.receive(into: batch), n > 0 { inFlight -= n }
            inFlight = max(0, inFlight)
        }
    }
}
