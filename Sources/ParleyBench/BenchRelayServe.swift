import Glibc
import ParleyMediaLeg
import ParleyMediaLegIO
import ParleyNetCore
import ParleyNetLinux
import ParleySRTP

// `ParleyBench relay-serve`: our relay as its own process, so that its CPU time is read from
// /proc/<pid>/stat exactly like rtpengine's. One thread: poll, recvmmsg (batch 64), the
// SRTPForwarder in place, sendmmsg.
//
// Control on stdin, one command a line:
//   route <source> <inbound profile> <inbound key hex> <destination> <outbound profile> <outbound key hex>
//   go        bind 127.0.0.1:0, print "port <n>", start relaying
//   stop      (or end of input) print the counters as one line and exit
// Profiles by their SRTPProfile raw value (aes128CmHmacSha1_80, aeadAes128Gcm).

/// Runs the relay server; returns the process exit status.
func relayServeMain() -> Int32 {
    let forwarder = SRTPForwarder()
    var pendingInput: [UInt8] = []
    var started = false
    var socket: UDPSocket? = nil

    func handle(_ line: Substring) -> Bool {
        let fields = line.split(separator: " ")
        switch fields.first {
        case "route"?:
            guard fields.count == 7,
                  let source = try? SocketAddress(parsing: String(fields[1])),
                  let inProfile = SRTPProfile(rawValue: String(fields[2])), let inKey = hexBytes(fields[3]),
                  let destination = try? SocketAddress(parsing: String(fields[4])),
                  let outProfile = SRTPProfile(rawValue: String(fields[5])), let outKey = hexBytes(fields[6]),
                  let inbound = try? SRTPSession(profile: inProfile, keyMaterial: inKey, direction: .inbound),
                  let outbound = try? SRTPSession(profile: outProfile, keyMaterial: outKey, direction: .outbound) else {
                emitLine("error bad route: \(line)")
                return false
            }
            forwarder.addRoute(from: source, inbound: inbound, outbound: outbound, to: destination)
        case "go"?:
            let buffers = UDPSocket.Options(receiveBufferSize: 4 << 20, sendBufferSize: 4 << 20)
            guard let bound = try? UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: buffers) else {
                emitLine("error cannot bind")
                return false
            }
            socket = bound
            started = true
            emitLine("port \(bound.localAddress.port)")
        case "stop"?:
            return false
        default:
            break
        }
        return true
    }

    /// Reads what stdin has; false at end of input, on `stop` or on a bad command.
    func readControl() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { return true }
        guard n > 0 else { return false }
        pendingInput += chunk[..<n]
        while let newline = pendingInput.firstIndex(of: 10) {
            let line = String(decoding: pendingInput[..<newline], as: UTF8.self)
            pendingInput.removeFirst(newline + 1)
            if !handle(line[...]) { return false }
        }
        return true
    }

    // Configuration phase: block on stdin until `go`.
    while !started {
        guard readControl() else { return 1 }
    }
    guard let socket else { return 1 }

    let batch = UDPReceiveBatch(capacity: 64)
    let queue = UDPSendQueue(capacity: 64)
    // Room past the packet for the largest growth the forwarder may apply.
    let work = UnsafeMutableRawBufferPointer.allocate(byteCount: batch.slotSize + 64, alignment: 16)
    defer { work.deallocate() }
    var sendDrops = 0
    var descriptors = [pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
    relay: while true {
        descriptors[0].events = Int16(queue.isEmpty ? POLLIN : POLLIN | POLLOUT)
        guard poll(&descriptors, 2, 1000) >= 0 || errno == EINTR else { break }
        if descriptors[1].revents != 0 {
            guard readControl() else { break relay }
        }
        if !queue.isEmpty { socket.flush(queue) }
        // A bounded number of batches per wake-up, so stdin is looked at now and then.
        for _ in 0..<64 {
            guard let received = try? socket.receive(into: batch), received > 0 else { break }
            for index in 0..<received {
                let payload = batch.payload(at: index)
                work.copyMemory(from: payload)
                let verdict = forwarder.forward(buffer: work, length: payload.count, from: batch.source(at: index))
                guard case .forward(let length, let destination) = verdict else { continue }
                if queue.isFull { socket.flush(queue) }
                if (try? queue.enqueue(UnsafeRawBufferPointer(rebasing: work[..<length]), to: destination)) != true {
                    sendDrops += 1
                }
            }
            socket.flush(queue)
            // A short batch means the socket is drained: back to poll without another
            // recvmmsg that would only say EAGAIN (one system call less per wake-up).
            if received < batch.capacity { break }
        }
    }
    let totals = forwarder.totals
    emitLine("counters forwarded=\(totals.forwarded) authFailures=\(totals.authFailures) replays=\(totals.replays) "
        + "malformed=\(totals.malformed) unknownSource=\(forwarder.unknownSourceDrops) sendDrops=\(sendDrops)")
    return 0
}

/// Writes one line to stdout unbuffered (the parent waits for it on a pipe).
private func emitLine(_ text: String) {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        bytes = bytes.dropFirst(n)
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
    return String(decoding: out, as: UTF8.self)
}

func hexBytes(_ text: Substring) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
    var out: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
        out.append(high << 4 | low)
    }
    return out
}

/// `ParleyBench relay-serve`: runs the relay server, then exits the process with its status.
func runRelayServeAndExit() -> Never { exit(relayServeMain()) }
