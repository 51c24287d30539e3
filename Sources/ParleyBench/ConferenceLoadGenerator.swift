import Foundation
import Glibc
import ParleyNetCore
import ParleyMediaCore
import ParleyNetLinux
import ParleyOpus
import Synchronization

/// The codec and talker settings every participant of a conference load sends with.
struct ConferenceCodecSettings: Sendable, Equatable {
    /// The Opus encoder's rate, the room's: 16000 or 48000.
    var sampleRate: Int
    /// The Opus encoder's complexity (Janus's `quality` for its own encoders too).
    var complexity = 4
    var bitrate = 32_000
    /// The dynamic payload type of Opus on both sides.
    var payloadType: UInt8 = 111
    /// How many participants send a tone each (distinct frequencies); the rest send
    /// low-level noise.
    var talkers = 3

    /// The talkers' tones in Hz: distinct, under 4 kHz so they survive a 16 kHz room.
    static let toneFrequencies = [440.0, 660.0, 990.0, 1320.0, 1760.0, 2200.0]
}

/// One participant of the load: the bound socket it sends from and receives the mix on,
/// and where the mixer receives its RTP.
struct ConferenceParticipantLink {
    /// Bound (the mixer was told its address); the generator sends from it and reads it.
    let socket: UDPSocket
    let sendTo: SocketAddress
}

/// A conference's participants on loopback, target-agnostic: given (socket, send-to) pairs
/// and codec settings, it sends each participant's Opus frames as RTP every 20 ms (an
/// encoder per participant; `talkers` send distinct tones, the rest low-level noise) from
/// one or two pacing threads, and a receive thread counts what the mixer sends back per
/// participant (`ConferenceReceiveStatistics`). It runs at most `maximumSeconds`, and takes
/// at most `maximumParticipants`.
final class ConferenceLoadGenerator: @unchecked Sendable {
    // Unchecked: the senders own their participants' encoders and RTP state once started
    // (handed over at `start`); what other threads read goes through `shared`.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let maximumParticipants = 400
    static let frameSeconds = 0.02

    /// What every thread reports, read by `snapshot`.
    struct Snapshot: Sendable {
        var received: [ConferenceReceiveStatistics]
        /// Frames sent per participant.
        var sent: [Int]
        /// How late each pacing tick started, in seconds, since the last `clearLateness`.
        var lateness: [Double]
        /// Ticks a sender skipped after falling more than 100 ms behind.
        var skippedTicks: Int
        /// Encoder or socket errors (the first is kept).
        var errors: Int
        var firstError: String?
    }

    let settings: ConferenceCodecSettings
    let links: [ConferenceParticipantLink]
    let maximumSeconds: Double
    /// Payloads kept per participant for `capturedPayloads` (the first ones received).
    let capturePerParticipant: Int
    static let maximumCapturePerParticipant = 1000
    private let captured: Mutex<[[[UInt8]]]>
    private let senders: [Sender]
    private let shared: Mutex<Snapshot>
    private let stopFlag = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)

    /// - Parameters:
    ///   - links: one per participant, at most `maximumParticipants`.
    ///   - senderThreads: 1 or 2 pacing threads (participants split between them).
    ///   - maximumSeconds: it stops by itself after this long, whatever the caller does.
    ///   - capturePerParticipant: RTP payloads to keep per participant, the first received
    ///     (at most `maximumCapturePerParticipant`), to check what the mixer sent; 0 keeps none.
    init(links: [ConferenceParticipantLink], settings: ConferenceCodecSettings, senderThreads: Int, maximumSeconds: Double,
         capturePerParticipant: Int = 0) throws {
        guard !links.isEmpty, links.count <= Self.maximumParticipants else {
            throw Failure(description: "\(links.count) participants: the load generator takes 1 to \(Self.maximumParticipants)")
        }
        guard [16_000, 48_000].contains(settings.sampleRate) else {
            throw Failure(description: "a room rate of \(settings.sampleRate) Hz: the load generator sends at 16000 or 48000")
        }
        self.settings = settings
        self.links = links
        self.maximumSeconds = min(max(maximumSeconds, 0.1), 600)
        self.capturePerParticipant = min(max(capturePerParticipant, 0), Self.maximumCapturePerParticipant)
        captured = Mutex(links.map { _ in [] })
        var participants: [Participant] = []
        for (index, link) in links.enumerated() {
            let encoder: OpusEncoder
            do {
                encoder = try OpusEncoder(sampleRate: settings.sampleRate, channels: 1, application: .voip, bitrate: settings.bitrate,
                                          complexity: settings.complexity, inbandFEC: false, packetLossPercent: 0, dtx: false)
            } catch {
                throw Failure(description: "Opus encoder: \(error)")
            }
            let tone = index < settings.talkers ? Self.toneFrequency(talker: index) : nil
            participants.append(Participant(index: index, link: link, encoder: encoder, tone: tone, sampleRate: settings.sampleRate,
                                            payloadType: settings.payloadType))
        }
        let threads = min(max(senderThreads, 1), 2, participants.count)
        senders = (0..<threads).map { thread in
            Sender(participants: participants.enumerated().filter { $0.offset % threads == thread }.map(\.element))
        }
        shared = Mutex(Snapshot(received: links.map { _ in ConferenceReceiveStatistics(clockRate: 48_000) }, sent: links.map { _ in 0 },
                                lateness: [], skippedTicks: 0, errors: 0, firstError: nil))
    }

    static func toneFrequency(talker: Int) -> Double {
        ConferenceCodecSettings.toneFrequencies[talker % ConferenceCodecSettings.toneFrequencies.count]
    }

    /// Binds `count` UDP sockets on 127.0.0.1 (free ports), for the mixer to be told where
    /// to send.
    static func bindLoopbackSockets(count: Int) throws -> [UDPSocket] {
        guard (1...maximumParticipants).contains(count) else { throw Failure(description: "\(count) sockets: 1 to \(maximumParticipants)") }
        return try (0..<count).map { _ in
            try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: UDPSocket.Options(receiveBufferSize: 256 * 1024))
        }
    }

    /// Starts the pacing threads and the receive thread.
    func start() {
        let deadline = wallSeconds() + maximumSeconds
        let start = wallSeconds() + 0.02
        for (number, sender) in senders.enumerated() {
            running.add(1, ordering: .relaxed)
            // The second sender's ticks fall between the first's, so their sends do not
            // arrive at the mixer in one burst.
            let offset = Double(number) * Self.frameSeconds / Double(senders.count)
            Thread.detachNewThread { [self] in
                sender.run(start: start + offset, deadline: deadline, stop: stopFlag, shared: shared)
                running.subtract(1, ordering: .releasing)
            }
        }
        running.add(1, ordering: .relaxed)
        Thread.detachNewThread { [self] in
            receive(deadline: deadline + 0.5)
            running.subtract(1, ordering: .releasing)
        }
    }

    /// Stops every thread and waits (at most 2 s) for them to end.
    func stop() {
        stopFlag.store(true, ordering: .releasing)
        for _ in 0..<200 where running.load(ordering: .acquiring) > 0 { usleep(10_000) }
    }

    /// A copy of what the threads have counted so far.
    func snapshot() -> Snapshot { shared.withLock { $0 } }

    /// The payloads kept per participant (`capturePerParticipant`), in arrival order.
    func capturedPayloads() -> [[[UInt8]]] { captured.withLock { $0 } }

    /// The level in dBFS of each of `frequencies` in `payloads` (Opus, decoded at 48 kHz in
    /// order; one that does not decode counts as a lost frame).
    static func toneLevels(ofOpus payloads: [[UInt8]], frequencies: [Double]) throws -> [Double] {
        let decoder = try OpusDecoder(sampleRate: 48_000, channels: 1)
        var samples: [Int16] = []
        for payload in payloads {
            if let decoded = try? decoder.decode(payload) { samples += decoded } else { samples += try decoder.decodeLost() }
        }
        return frequencies.map { FrequencyAnalysis.toneLevelDBFS(samples: samples, sampleRate: 48_000, frequency: $0) }
    }

    /// Starts a new window of pacing lateness samples.
    func clearLateness() { shared.withLock { $0.lateness.removeAll(keepingCapacity: true) } }

    /// Reads every socket as datagrams arrive (poll, then drain each readable one into the
    /// participant's statistics, stamped with the time poll returned).
    private func receive(deadline: Double) {
        var descriptors = links.map { pollfd(fd: $0.socket.fileDescriptor, events: Int16(POLLIN), revents: 0) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        while !stopFlag.load(ordering: .acquiring) && wallSeconds() < deadline {
            let ready = poll(&descriptors, nfds_t(descriptors.count), 50)
            guard ready > 0 else { continue }
            let now = wallSeconds()
            for index in descriptors.indices where descriptors[index].revents != 0 {
                descriptors[index].revents = 0
                let socket = links[index].socket
                // At most 64 at a time from one socket; what is left is read on the next poll.
                for _ in 0..<64 {
                    guard let (count, _) = (try? socket.receive(into: buffer)) ?? nil else { break }
                    let datagram = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    let media = shared.withLock { $0.received[index].record(datagram: datagram, arrival: now) }
                    if media && capturePerParticipant > 0, let payload = Self.rtpPayload(datagram) {
                        captured.withLock { if $0[index].count < capturePerParticipant { $0[index].append(payload) } }
                    }
                }
            }
        }
    }

    /// The payload of an RTP packet (RFC 3550 5.1 and 5.3.1: past the CSRCs and any header
    /// extension, without padding); nil when the lengths do not add up.
    static func rtpPayload(_ datagram: UnsafeRawBufferPointer) -> [UInt8]? {
        guard datagram.count >= 12 else { return nil }
        var start = 12 + Int(datagram[0] & 0x0f) * 4
        if datagram[0] & 0x10 != 0 {
            guard datagram.count >= start + 4 else { return nil }
            start += 4 + (Int(datagram[start + 2]) << 8 | Int(datagram[start + 3])) * 4
        }
        var end = datagram.count
        if datagram[0] & 0x20 != 0, end > start { end -= Int(datagram[end - 1]) }
        guard start <= end else { return nil }
        return Array(datagram[start..<end])
    }

    /// One participant's sending state, owned by one sender thread.
    private final class Participant {
        let index: Int
        let link: ConferenceParticipantLink
        let encoder: OpusEncoder
        let tone: Double?
        let sampleRate: Int
        let payloadType: UInt8
        let ssrc: UInt32
        var sequence: UInt16
        var timestamp: UInt32
        var phase = 0.0
        var noise: UInt64
        var pcm: [Int16]
        var packet: [UInt8] = []

        init(index: Int, link: ConferenceParticipantLink, encoder: OpusEncoder, tone: Double?, sampleRate: Int, payloadType: UInt8) {
            self.index = index
            self.link = link
            self.encoder = encoder
            self.tone = tone
            self.sampleRate = sampleRate
            self.payloadType = payloadType
            // Distinct per participant; any values do (a load, not a secure stream).
            ssrc = 0x5041_0000 &+ UInt32(index) &* 7919
            sequence = UInt16(truncatingIfNeeded: index &* 1009)
            timestamp = UInt32(truncatingIfNeeded: index &* 104_729)
            noise = 0x9E37_79B9_7F4A_7C15 &+ UInt64(index)
            pcm = [Int16](repeating: 0, count: sampleRate / 50)
        }

        /// The next 20 ms: a tone at about -12 dBFS, or noise at about -54 dBFS.
        func fillFrame() {
            if let tone {
                let step = 2 * Double.pi * tone / Double(sampleRate)
                var phase = self.phase
                pcm.withUnsafeMutableBufferPointer { frame in
                    for i in frame.indices {
                        frame[i] = Int16(8000 * sin(phase))
                        phase += step
                    }
                }
                self.phase = phase.truncatingRemainder(dividingBy: 2 * Double.pi)
            } else {
                var noise = self.noise
                pcm.withUnsafeMutableBufferPointer { frame in
                    for i in frame.indices {
                        // xorshift64: cheap noise, no cryptographic need.
                        noise ^= noise << 13
                        noise ^= noise >> 7
                        noise ^= noise << 17
                        frame[i] = Int16(Int64(noise & 0xff) - 128) / 2
                    }
                }
                self.noise = noise
            }
        }

        /// Encodes the frame and sends it as one RTP packet (RFC 3550 5.1, RFC 7587: the
        /// timestamp advances 960 per 20 ms on Opus's 48 kHz clock).
        func send() throws {
            fillFrame()
            let payload = try encoder.encode(pcm)
            packet.removeAll(keepingCapacity: true)
            packet += [0x80, payloadType & 0x7f, UInt8(sequence >> 8), UInt8(sequence & 0xff),
                       UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xff), UInt8(timestamp >> 8 & 0xff), UInt8(timestamp & 0xff),
                       UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xff), UInt8(ssrc >> 8 & 0xff), UInt8(ssrc & 0xff)]
            packet += payload
            _ = try link.socket.send(packet, to: link.sendTo)
            sequence &+= 1
            timestamp &+= 960
        }
    }

    /// One pacing thread and the participants it sends for.
    private final class Sender: @unchecked Sendable {
        // Unchecked: `participants` is used only by the one thread `run` executes on.
        let participants: [Participant]

        init(participants: [Participant]) {
            self.participants = participants
        }

        /// Sends a frame for every participant at `start` and every 20 ms after, until
        /// `stop` or `deadline`; ticks are on an absolute schedule, so a late one does not
        /// move the next.
        func run(start: Double, deadline: Double, stop: borrowing Atomic<Bool>, shared: borrowing Mutex<Snapshot>) {
            var tick = 0
            var sent = [Int](repeating: 0, count: participants.count)
            var errors: [String] = []
            var lateness: [Double] = []
            var skipped = 0
            while !stop.load(ordering: .acquiring) {
                let due = start + Double(tick) * ConferenceLoadGenerator.frameSeconds
                guard due < deadline else { break }
                sleepUntil(due)
                let late = wallSeconds() - due
                lateness.append(max(0, late))
                for (slot, participant) in participants.enumerated() {
                    do {
                        try participant.send()
                        sent[slot] += 1
                    } catch {
                        errors.append("participant \(participant.index): \(error)")
                    }
                }
                tick += 1
                // More than 100 ms behind: skip ahead rather than send a burst of frames.
                if wallSeconds() - (start + Double(tick) * ConferenceLoadGenerator.frameSeconds) > 0.1 {
                    let behind = Int((wallSeconds() - start) / ConferenceLoadGenerator.frameSeconds) + 1
                    skipped += behind - tick
                    tick = behind
                }
                // Every tick, so a window read between two ticks counts whole ticks.
                publish(&sent, &lateness, &skipped, &errors, shared)
            }
        }

        private func publish(_ sent: inout [Int], _ lateness: inout [Double], _ skipped: inout Int, _ errors: inout [String],
                             _ shared: borrowing Mutex<Snapshot>) {
            let indices = participants.map(\.index)
            let (sentNow, latenessNow, skippedNow, errorsNow) = (sent, lateness, skipped, errors)
            shared.withLock { snapshot in
                for (slot, index) in indices.enumerated() { snapshot.sent[index] += sentNow[slot] }
                snapshot.lateness += latenessNow
                snapshot.skippedTicks += skippedNow
                snapshot.errors += errorsNow.count
                if snapshot.firstError == nil { snapshot.firstError = errorsNow.first }
            }
            for slot in sent.indices { sent[slot] = 0 }
            lateness.removeAll(keepingCapacity: true)
            skipped = 0
            errors.removeAll()
        }

        private func sleepUntil(_ due: Double) {
            var target = timespec(tv_sec: Int(due), tv_nsec: Int((due - Double(Int(due))) * 1e9))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
        }
    }
}
