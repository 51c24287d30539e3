import Foundation
import Glibc

/// Measures what `ImpairmentRelay` really does before the speech rows trust it: datagrams
/// stamped with their send time go from a client socket through the relay to an echo
/// socket and back, and the loss, the added delay and the reordering seen on return are
/// compared with the impairment asked for. Only the downlink (echo -> client) is impaired,
/// so the round trip shows the one-way figures.
enum ImpairmentRelayCheck {
    /// The line for the report, or a failure line when the relay is off its settings.
    static func run(impairment: PathImpairment, count: Int = 2000, port: UInt16 = 12_010) -> (line: String, passed: Bool) {
        guard let relay = try? ImpairmentRelay(frontAddress: "127.0.0.2", backAddress: "127.0.0.1", ports: port...port, impairment: impairment),
              let echo = ImpairmentRelay.boundSocket("127.0.0.1", port), let client = ImpairmentRelay.boundSocket("127.0.0.1", 0),
              var front = ImpairmentRelay.address("127.0.0.2", port) else {
            return ("relay check: cannot bind 127.0.0.2/127.0.0.1 port \(port)", false)
        }
        defer {
            close(echo)
            close(client)
        }
        var delays: [Double] = []
        var lastSequence = -1
        var reordered = 0
        var buffer = [UInt8](repeating: 0, count: 64)
        let start = monotonicNanoseconds()
        var sent = 0
        // One datagram a millisecond, echoed at once; the last ones get 200 ms to return.
        while true {
            let now = monotonicNanoseconds()
            if sent < count, now >= start + UInt64(sent) * 1_000_000 {
                var stamp = [UInt8](repeating: 0, count: 16)
                withUnsafeBytes(of: UInt64(sent).littleEndian) { stamp.replaceSubrange(0..<8, with: $0) }
                withUnsafeBytes(of: now.littleEndian) { stamp.replaceSubrange(8..<16, with: $0) }
                _ = stamp.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &front) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(client, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
                sent += 1
            }
            if sent == count, now > start + UInt64(count) * 1_000_000 + 200_000_000 { break }
            var descriptors = [pollfd(fd: echo, events: Int16(POLLIN), revents: 0), pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
            guard poll(&descriptors, 2, 1) > 0 else { continue }
            // Echo: back to whoever sent it (the relay's flow socket).
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(echo, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length) }
                }
            }
            if n > 0 {
                _ = buffer.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &from) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(echo, bytes.baseAddress, n, 0, $0, length) }
                    }
                }
            }
            while true {
                let got = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard got == 16 else { break }
                let sequence = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self) })
                let sentAt = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
                delays.append(Double(monotonicNanoseconds() - sentAt) / 1e6)
                if sequence < lastSequence { reordered += 1 }
                lastSequence = max(lastSequence, sequence)
            }
        }
        _ = relay.stop()
        let lossPercent = 100 * Double(count - delays.count) / Double(count)
        let sorted = delays.sorted()
        let mean = delays.isEmpty ? 0 : delays.reduce(0, +) / Double(delays.count)
        let low = impairment.delayMilliseconds - impairment.jitterMilliseconds
        let high = impairment.delayMilliseconds + impairment.jitterMilliseconds
        // Loss within four standard deviations of the binomial; delays inside the range
        // (5 ms of slack above for scheduling), their mean near its middle.
        let p = impairment.lossPercent / 100
        let sigma = 100 * (p * (1 - p) / Double(count)).squareRoot()
        let passed = !sorted.isEmpty && abs(lossPercent - impairment.lossPercent) <= 4 * sigma + 0.1
            && sorted.first! >= low - 0.5 && sorted.last! <= high + 5 && abs(mean - impairment.delayMilliseconds) < 3
            && (impairment.jitterMilliseconds < 1 || reordered > 0)
        let line = "relay check (\(impairment), \(count) datagrams, 1 ms apart): lost \(fixed(lossPercent, 1)) %,"
            + " one-way delay \(fixed(sorted.first ?? .nan, 1))-\(fixed(sorted.last ?? .nan, 1)) ms, mean \(fixed(mean, 1)),"
            + " \(reordered) overtaken: \(passed ? "as set" : "OFF ITS SETTINGS")"
        return (line, passed)
    }
}
