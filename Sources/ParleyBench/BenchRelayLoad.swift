import Glibc
import ParleyNetCore
import ParleyNetLinux
import ParleySRTP

// The load generator of the relay comparison: N streams of pre-protected 172-byte SRTP
// packets (Opus-sized), each from its own UDP socket (the relay tells streams apart by
// source address), all received on one socket. A window of packets in flight keeps the relay
// busy without overrunning socket buffers. The generator's own CPU is not measured.

/// The first SSRC; stream `s` uses `streamSSRCBase + s`.
let streamSSRCBase: UInt32 = 0x5000_0000
/// Size of every datagram the generator sends: RTP header, Opus payload, SRTP tag.
let relayPacketSize = 172

/// Every packet of every stream, protected ahead of time, in sending order (stream-major
/// round robin: packet 0 of each stream, then packet 1 of each stream...).
final class RelayStreamLoad {
    let profile: SRTPProfile
    let streams: Int
    let packetsPerStream: Int
    /// Key material stream `s` protects with (what the relay's inbound session needs).
    let keys: [[UInt8]]
    private let storage: UnsafeMutableRawBufferPointer

    var total: Int { streams * packetsPerStream }
    var payloadLength: Int { relayPacketSize - 12 - profile.rtpTagLength }

    init(profile: SRTPProfile, streams: Int, packetsPerStream: Int, seed: UInt64) throws {
        precondition(packetsPerStream <= 65_535, "sequence numbers must not wrap")
        self.profile = profile
        self.streams = streams
        self.packetsPerStream = packetsPerStream
        var generator = BenchRandom(seed: seed)
        keys = (0..<streams).map { _ in generator.bytes(profile.keyMaterialLength) }
        storage = .allocate(byteCount: streams * packetsPerStream * relayPacketSize, alignment: 16)
        let plainLength = relayPacketSize - profile.rtpTagLength
        for stream in 0..<streams {
            let session = try SRTPSession(profile: profile, keyMaterial: keys[stream], direction: .outbound)
            for index in 0..<packetsPerStream {
                let slot = packet(stream: stream, index: index)
                let plain = plainPacket(stream: stream, index: index)
                slot.copyBytes(from: plain)
                let length = try session.protect(buffer: slot, length: plainLength)
                precondition(length == relayPacketSize)
            }
        }
    }

    deinit { storage.deallocate() }

    /// The protected packet: `relayPacketSize` bytes.
    func packet(stream: Int, index: Int) -> UnsafeMutableRawBufferPointer {
        let offset = (index * streams + stream) * relayPacketSize
        return UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + relayPacketSize)])
    }

    /// Packet `index` of `stream` before protection: sequence number index + 1, 20 ms of
    /// 48 kHz timestamps apart, payload type 111, a payload that depends on both.
    func plainPacket(stream: Int, index: Int) -> [UInt8] {
        let sequence = UInt16(index + 1)
        let timestamp = UInt32(truncatingIfNeeded: index &* 960)
        let ssrc = streamSSRCBase + UInt32(stream)
        var bytes: [UInt8] = [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xff)]
        for shift in [24, 16, 8, 0] as [UInt32] { bytes.append(UInt8(truncatingIfNeeded: timestamp >> shift)) }
        for shift in [24, 16, 8, 0] as [UInt32] { bytes.append(UInt8(truncatingIfNeeded: ssrc >> shift)) }
        for offset in 0..<payloadLength { bytes.append(UInt8(truncatingIfNeeded: offset &* 7 &+ index &+ stream)) }
        return bytes
    }
}

/// What the receiving side expects of the relay's output.
struct RelayReceiveCheck {
    /// Length of each forwarded datagram (the outbound tag may differ from the inbound one).
    var expectedLength: Int
    /// Sessions that unprotect stream `s` as the relay protected it; nil when we cannot
    /// (a suite our SRTP wrapper does not offer). Every `sampleEvery`-th packet is checked.
    var validators: [SRTPSession]?
    var sampleEvery = 8
}

struct RelayLoadResult {
    var sent = 0
    var received = 0
    /// Received with the expected length.
    var rightLength = 0
    /// Received with a payload that differs from what was sent (re-encrypted, not passed through).
    var recrypted = 0
    var validated = 0
    var validationFailures = 0
    /// Datagrams that were not one of our streams' RTP packets (e.g. RTCP from the relay).
    var other = 0
    var wallSeconds = 0.0
}

/// The sockets of the generator: one sender per stream, one receiver for all.
final class RelayLoadSockets {
    let senders: [UDPSocket]
    let receiver: UDPSocket

    init(streams: Int) throws {
        senders = try (0..<streams).map { _ in
            try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: .init(sendBufferSize: 1 << 20))
        }
        receiver = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: .init(receiveBufferSize: 4 << 20))
    }

    /// Reads and discards whatever is waiting on the receiver.
    func drain() {
        let batch = UDPReceiveBatch(capacity: 64)
        for _ in 0..<10_000 { if ((try? receiver.receive(into: batch)) ?? 0) == 0 { break } }
    }
}

/// How fast the generator sends.
enum RelayPace {
    /// As fast as the relay forwards: at most this many packets in flight.
    case window(Int)
    /// Real time: this many packets per second over all streams, evenly spaced (each stream
    /// every 20 ms when the rate is 50 per stream), whatever comes back.
    case rate(Double)
}

/// Sends `load` through the relay at `targets[s]` (where stream `s` goes) at `pace`, for at
/// most `wallLimit` seconds of sending, then waits until nothing has arrived for 300 ms.
func runRelayLoad(_ load: RelayStreamLoad, sockets: RelayLoadSockets, targets: [SocketAddress],
                  pace: RelayPace, wallLimit: Double, check: RelayReceiveCheck) -> RelayLoadResult {
    var result = RelayLoadResult()
    let batch = UDPReceiveBatch(capacity: 64)
    var perStreamReceived = [Int](repeating: 0, count: load.streams)
    var seen = [Bool](repeating: false, count: load.total)
    var presumedLost = 0
    var next = 0
    let start = wallSeconds()
    var lastArrival = start
    var stalledSince: Double? = nil

    func receive(_ datagram: UnsafeRawBufferPointer) {
        guard datagram.count >= 12, datagram[1] & 0x7f == 111 else {
            result.other += 1
            return
        }
        let ssrc = UInt32(datagram[8]) << 24 | UInt32(datagram[9]) << 16 | UInt32(datagram[10]) << 8 | UInt32(datagram[11])
        let index = (Int(datagram[2]) << 8 | Int(datagram[3])) - 1
        guard ssrc >= streamSSRCBase, Int(ssrc - streamSSRCBase) < load.streams, index >= 0, index < load.packetsPerStream else {
            result.other += 1
            return
        }
        let stream = Int(ssrc - streamSSRCBase)
        result.received += 1
        perStreamReceived[stream] += 1
        seen[index * load.streams + stream] = true
        if datagram.count == check.expectedLength { result.rightLength += 1 }
        let sent = load.packet(stream: stream, index: index)
        let compared = min(16, datagram.count - 12)
        if !(0..<compared).allSatisfy({ datagram[12 + $0] == sent[12 + $0] }) { result.recrypted += 1 }
        if let validators = check.validators, index % check.sampleEvery == 0 {
            let plain = try? validators[stream].unprotect(srtp: Array(datagram))
            if plain == load.plainPacket(stream: stream, index: index) { result.validated += 1 } else { result.validationFailures += 1 }
        }
    }

    while true {
        let now = wallSeconds()
        let sending = next < load.total && now - start < wallLimit
        if sending {
            let allowed: Int
            switch pace {
            case .window(let window): allowed = result.received + presumedLost + window
            case .rate(let rate): allowed = Int((now - start) * rate) + 1
            }
            while next < load.total && next < allowed {
                let stream = next % load.streams
                let bytes = UnsafeRawBufferPointer(load.packet(stream: stream, index: next / load.streams))
                guard (try? sockets.senders[stream].send(bytes, to: targets[stream])) == true else { break }
                next += 1
            }
        } else if now - lastArrival > 0.3 || now - start > wallLimit + 5 {
            break
        }
        var descriptor = pollfd(fd: sockets.receiver.fileDescriptor, events: Int16(POLLIN), revents: 0)
        if case .rate = pace, sending {
            _ = poll(&descriptor, 1, 1)
        } else {
            _ = poll(&descriptor, 1, 20)
        }
        // Progress is relayed media arriving: RTCP a relay's legs send of their own (parleyd's
        // do, rtpengine passes RTCP through) is counted as other and must not keep the run going.
        let receivedBefore = result.received
        for _ in 0..<16 {
            guard let n = try? sockets.receiver.receive(into: batch), n > 0 else { break }
            for index in 0..<n { receive(batch.payload(at: index)) }
        }
        let after = wallSeconds()
        if result.received > receivedBefore {
            lastArrival = after
            stalledSince = nil
        } else if sending, case .window = pace {
            // Nothing back for 50 ms with packets in flight: count them as lost and go on.
            if let since = stalledSince, after - since > 0.05 {
                presumedLost = next - result.received
                stalledSince = nil
            } else if stalledSince == nil {
                stalledSince = after
            }
        }
    }
    result.sent = next
    if getenv("PARLEY_RELAY_DEBUG") != nil {
        for stream in 0..<load.streams {
            var ranges: [String] = []
            var index = 0
            while index < load.packetsPerStream && ranges.count < 8 {
                if !seen[index * load.streams + stream] {
                    let first = index
                    while index < load.packetsPerStream && !seen[index * load.streams + stream] { index += 1 }
                    ranges.append("\(first)..<\(index)")
                } else { index += 1 }
            }
            print("debug: stream \(stream) received \(perStreamReceived[stream]) missing \(ranges.joined(separator: " "))")
        }
        print("debug: other \(result.other)")
    }
    result.wallSeconds = lastArrival - start
    return result
}

/// SplitMix64, for keys that repeat from run to run.
struct BenchRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
