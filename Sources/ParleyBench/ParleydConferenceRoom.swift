import Glibc
import ParleyNetCore
import ParleyNetLinux
import ParleySIP

/// parleyd itself as the `conference` group's Parley side: the release `parleyd` next to
/// this executable (`ServerUnderTest`), taking the load's participants into a room as
/// phones calling in (docs/sip.md, "Calls in"). One number's rule names the room
/// (`--sip-number NUMBER=KEY:conference:ROOM`); the bench's own SIP socket is the trunk
/// parleyd takes INVITEs from, and each participant is one SIP call from it
/// (`ConferenceSIPCaller`) whose SDP offers plain-RTP Opus at the participant's load socket.
/// So what is measured is the product's whole path for a room: SIP, the call engine, the
/// media anchor, the room's mixer and its plain-RTP legs.
///
/// The room's rate and Opus complexity are parleyd's command-line settings
/// (`--conference-rate`, `--conference-opus-complexity`), so a step at another rate or
/// complexity restarts parleyd. `--conference-linger 0` closes the room with its last
/// participant, so every step mixes in a fresh room. Its CPU is the parleyd process's from
/// /proc (every thread); its tick lateness and talkers come from `/metrics`.
final class ParleydConferenceRoom {
    /// The room's number and id (any will do: one application, one rule).
    static let number = "46700000900"
    static let room = "bench"
    /// How long a join waits for every 200, beyond a tenth of a second per participant.
    static let joinTimeoutSeconds = 10.0

    private var server: ServerUnderTest
    /// parleyd's SIP address (from its banner).
    private var serverSIP: SocketAddress
    /// The bench's SIP socket: the trunk.
    private let socket: UDPSocket
    private var caller: ConferenceSIPCaller
    private var sampleRate: Int
    private var complexity: Int
    private var step = 0
    /// The open room's calls, in participant order.
    private var calls: [ConferenceSIPCaller.Call] = []
    /// The figures read by the last `tickLateness`, for the step's note.
    private var lastMetrics: ParleydRoomMetrics?
    /// parleyd's CPU by thread name when the room's calls were up, and when; the note says
    /// which threads the room kept busy from then to `tickLateness` (warm-up and window).
    private var threadsAtJoin: (cpu: [String: Double], wall: Double)?
    private var busiestSinceJoin: String?
    private var stopped = false

    /// Starts parleyd mixing at `sampleRate` with its encoders at `complexity`.
    init(sampleRate: Int, complexity: Int) throws {
        socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0), options: UDPSocket.Options(receiveBufferSize: 256 * 1024))
        self.sampleRate = sampleRate
        self.complexity = complexity
        do {
            (server, serverSIP) = try Self.startServer(trunk: socket.localAddress, sampleRate: sampleRate, complexity: complexity)
        } catch {
            socket.close()
            throw error
        }
        caller = ConferenceSIPCaller(local: socket.localAddress, server: serverSIP, number: Self.number,
                                     runID: "bench\(getpid())r\(sampleRate)", opusPayloadType: 111)
    }

    deinit { stop() }

    /// parleyd with SIP on a free loopback port, the bench's socket as its trunk, the
    /// room's number, rate and complexity; and its SIP address, read from the banner line
    /// after the HTTP one.
    private static func startServer(trunk: SocketAddress, sampleRate: Int, complexity: Int) throws -> (ServerUnderTest, SocketAddress) {
        let server = try ServerUnderTest(
            extraArguments: ["--sip-listen", "127.0.0.1:0", "--sip-trunk", "sip:\(trunk);transport=udp",
                             "--conference-rate", "\(sampleRate)", "--conference-opus-complexity", "\(complexity)",
                             "--conference-linger", "0"],
            applicationArguments: { ["--sip-number", "\(number)=\($0):conference:\(room)"] })
        let prefix = "parleyd listening for SIP on udp and tcp "
        for _ in 0..<10 {
            guard let line = server.child.readLine(timeoutMs: 5000) else { break }
            if line.hasPrefix(prefix), let address = try? SocketAddress(parsing: String(line.dropFirst(prefix.count))) {
                return (server, address)
            }
        }
        server.stop()
        throw ChildProcess.Failure(description: "parleyd printed no SIP address (\(server.dataDirectory)/server.log)")
    }

    // MARK: Signaling

    private func send(_ message: SIPMessage, to destination: SocketAddress? = nil) {
        _ = try? socket.send(message.serialized(), to: destination ?? serverSIP)
    }

    /// Reads what parleyd sent within `timeoutMs`, answering its requests (an OPTIONS,
    /// a BYE of its own) with 200, and hands each response to `onResponse`.
    private func pump(timeoutMs: Int32, _ onResponse: (SIPMessage) -> Void) {
        var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeoutMs) > 0 else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ConferenceSIPCaller.maximumDatagram, alignment: 8)
        defer { buffer.deallocate() }
        for _ in 0..<256 {
            guard let (count, source) = (try? socket.receive(into: buffer)) ?? nil else { return }
            guard let message = try? ConferenceSIPCaller.message(UnsafeRawBufferPointer(rebasing: buffer[..<count])) else { continue }
            if message.isRequest {
                if message.method != .ack, let ok = try? ConferenceSIPCaller.ok(message, toTag: "bench") { send(ok, to: source) }
            } else {
                onResponse(message)
            }
        }
    }

    /// One INVITE per participant, each answered, ACKed and checked to have chosen Opus;
    /// INVITEs nothing answered yet are sent again every second.
    private func join(_ participants: [SocketAddress]) throws -> [SocketAddress] {
        step += 1
        pump(timeoutMs: 0) { _ in }
        calls = try participants.enumerated().map { try caller.invite(participant: $0.offset, step: step, media: $0.element) }
        let index = Dictionary(uniqueKeysWithValues: calls.enumerated().map { ($0.element.callID, $0.offset) })
        var heard = Set<Int>()
        var failure: String?
        let deadline = wallSeconds() + Self.joinTimeoutSeconds + 0.1 * Double(participants.count)
        var lastSend = wallSeconds()
        calls.forEach { send($0.invite) }
        while failure == nil && calls.contains(where: { $0.answer == nil }) && wallSeconds() < deadline {
            pump(timeoutMs: 50) { response in
                guard let callID = try? response.callID(), let position = index[callID] else { return }
                heard.insert(position)
                do {
                    switch try ConferenceSIPCaller.handle(response, for: &calls[position]) {
                    case .answered:
                        send(try caller.ack(calls[position]))
                    case .refused(let status, let reason):
                        send(try caller.ackFailure(calls[position], response: response))
                        failure = "parleyd refused participant \(position)'s INVITE: \(status) \(reason)"
                    default:
                        break
                    }
                } catch {
                    failure = "participant \(position): \(error)"
                }
            }
            if wallSeconds() - lastSend >= 1 {
                lastSend = wallSeconds()
                for (position, call) in calls.enumerated() where !heard.contains(position) { send(call.invite) }
            }
        }
        if let failure { throw ChildProcess.Failure(description: failure) }
        let answers = calls.compactMap(\.answer)
        guard answers.count == calls.count else {
            throw ChildProcess.Failure(description: "\(calls.count - answers.count) of \(calls.count) INVITEs unanswered after the join timeout")
        }
        if let other = answers.first(where: { $0.encodingName.lowercased() != "opus" }) {
            throw ChildProcess.Failure(description: "parleyd chose \(other.encodingName), not Opus")
        }
        return answers.map(\.address)
    }

    /// BYE to every call, sent again every half second until answered (at most 5 s).
    private func leave() {
        let index = Dictionary(uniqueKeysWithValues: calls.enumerated().map { ($0.element.callID, $0.offset) })
        let byes = calls.map { try? caller.bye($0) }
        var pending = Set(byes.indices.filter { byes[$0] != nil })
        let deadline = wallSeconds() + 5
        var lastSend = 0.0
        while !pending.isEmpty && wallSeconds() < deadline {
            if wallSeconds() - lastSend >= 0.5 {
                lastSend = wallSeconds()
                for position in pending { if let bye = byes[position] { send(bye) } }
            }
            pump(timeoutMs: 50) { response in
                guard let callID = try? response.callID(), let position = index[callID] else { return }
                switch try? ConferenceSIPCaller.handle(response, for: &calls[position]) {
                case .byeAnswered?:
                    pending.remove(position)
                case .answered?:
                    // A 200 to the INVITE resent after our ACK crossed it.
                    if let ack = try? caller.ack(calls[position]) { send(ack) }
                default:
                    break
                }
            }
        }
        calls = []
    }

    // MARK: Metrics

    private func metrics() -> ParleydRoomMetrics? {
        MetricsSamples.scrape(server.address).map(ParleydRoomMetrics.init)
    }

    /// Waits (at most `seconds`) until `/metrics` shows what `done` wants; the last figures.
    @discardableResult
    private func awaitMetrics(seconds: Double, _ done: (ParleydRoomMetrics) -> Bool) -> ParleydRoomMetrics? {
        let deadline = wallSeconds() + seconds
        var last = metrics()
        while !(last.map(done) ?? false) && wallSeconds() < deadline {
            usleep(100_000)
            last = metrics()
        }
        return last
    }
}

extension ParleydConferenceRoom: ConferenceMixerUnderTest {
    var name: String { "Parley (parleyd)" }

    func cpuSeconds() -> Double { server.cpuSeconds() }

    func openRoom(participants: [SocketAddress], settings: ConferenceCodecSettings) throws -> [SocketAddress] {
        guard calls.isEmpty else { throw ChildProcess.Failure(description: "a parleyd room is open already") }
        lastMetrics = nil
        threadsAtJoin = nil
        busiestSinceJoin = nil
        if settings.sampleRate != sampleRate || settings.complexity != complexity {
            server.stop()
            (server, serverSIP) = try Self.startServer(trunk: socket.localAddress, sampleRate: settings.sampleRate, complexity: settings.complexity)
            sampleRate = settings.sampleRate
            complexity = settings.complexity
            caller = ConferenceSIPCaller(local: socket.localAddress, server: serverSIP, number: Self.number,
                                         runID: "bench\(getpid())r\(sampleRate)", opusPayloadType: settings.payloadType)
        }
        let remotes: [SocketAddress]
        do { remotes = try join(participants) } catch {
            leave()
            throw error
        }
        // Every call in the one room, as the room itself counts them.
        let figures = awaitMetrics(seconds: 5) { $0.rooms == 1 && $0.participants == participants.count }
        guard figures?.rooms == 1, figures?.participants == participants.count else {
            leave()
            throw ChildProcess.Failure(description: "parleyd's /metrics shows \(figures?.rooms.map(String.init) ?? "?") rooms and "
                                       + "\(figures?.participants.map(String.init) ?? "?") participants, not 1 room of \(participants.count)")
        }
        threadsAtJoin = (threadCPUSecondsByName(server.child.pid), wallSeconds())
        return remotes
    }

    /// The worst room's lateness p99 over its kept ticks (the room is fresh each step, so
    /// those are the step's warm-up and window, up to 1024 ticks). `/metrics` has no p50:
    /// the maximum stands in its place in the note, and the p50 reported is nan.
    func tickLateness(overLast seconds: Double) -> (p50: Double, p99: Double)? {
        lastMetrics = metrics()
        busiestSinceJoin = threadsAtJoin.map {
            busiestThreads(before: $0.cpu, after: threadCPUSecondsByName(server.child.pid), seconds: wallSeconds() - $0.wall, count: 4)
        }
        return lastMetrics?.tickLatenessP99.map { (.nan, $0) }
    }

    func stepNote() -> String? {
        guard let figures = lastMetrics else { return "parleyd: /metrics did not answer" }
        let milliseconds = { (value: Double?) in value.map { fixed($0 * 1e3, 2) } ?? "?" }
        return "parleyd (/metrics): \(figures.participants.map(String.init) ?? "?") participants, "
            + "\(figures.talkers.map(String.init) ?? "?") talking now; tick lateness p99 \(milliseconds(figures.tickLatenessP99)) ms, "
            + "max \(milliseconds(figures.tickLatenessMaximum)) ms; room at \(sampleRate) Hz, Opus complexity \(complexity)"
            + (busiestSinceJoin.map { "; busiest threads since the join (cores): " + $0 } ?? "")
    }

    func closeRoom() throws {
        guard !calls.isEmpty else { return }
        leave()
        // The next step's room must be a fresh one: this one closes with its last call.
        let figures = awaitMetrics(seconds: 5) { $0.rooms == 0 }
        if figures?.rooms != 0 { throw ChildProcess.Failure(description: "parleyd's room did not close after every BYE") }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        if !calls.isEmpty { leave() }
        server.stop()
        socket.close()
    }
}
