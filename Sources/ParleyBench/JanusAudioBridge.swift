import Foundation
import Glibc
import ParleyNetCore
import Synchronization

/// Janus (Debian's `janus`) as the peer of the `conference` group: a child process with a
/// private configuration that loads only the AudioBridge plugin and the HTTP transport
/// (on a free loopback port), no STUN or TURN, ICE on loopback only, its log in a file.
/// Driven through its HTTP API: one session (kept alive by a thread of its own), one
/// control handle that creates and destroys rooms, and one handle per participant, each
/// joined as a plain-RTP participant (the join's `rtp` object: Janus sends the mix to our
/// address and tells us the port it receives on).
final class JanusAudioBridge {
    let child: ChildProcess
    /// The HTTP transport's port on 127.0.0.1.
    let port: UInt16
    /// The private configuration, runtime files and `janus.log`.
    let directory: String
    private let client: JanusHTTPClient
    private let session: Int64
    private let controlHandle: Int64
    /// Participant handles by room, detached when their room is destroyed.
    private var handles: [Int64: [Int64]] = [:]
    private var nextTransaction = 0
    /// The room `openRoom` created, until `closeRoom`.
    private var openedRoom: Int64?
    private let keepalives = KeepaliveFlags()

    static var executable: String? {
        ["/usr/bin/janus", "/usr/local/bin/janus"].first { access($0, X_OK) == 0 }
    }

    /// Where Debian's package puts the plugins and transports.
    static var libraryDirectory: String? {
        ["/usr/lib/x86_64-linux-gnu/janus", "/usr/lib/aarch64-linux-gnu/janus", "/usr/lib/janus", "/usr/local/lib/janus"]
            .first { access($0 + "/plugins/libjanus_audiobridge.so", R_OK) == 0 && access($0 + "/transports/libjanus_http.so", R_OK) == 0 }
    }

    /// Ports the AudioBridge binds for its plain-RTP participants, away from the core's
    /// (unused here: no WebRTC peer connects).
    static let rtpPortRange = "46000-46999"

    /// Writes the configuration into `directory`, starts Janus and waits (at most
    /// `startTimeoutSeconds`) until its HTTP API answers, then opens the session.
    init(directory: String, startTimeoutSeconds: Double = 10) throws {
        guard let executable = Self.executable else {
            throw ChildProcess.Failure(description: "janus not found (Debian package janus; scripts/install-deps.sh bench installs it)")
        }
        guard let library = Self.libraryDirectory else {
            throw ChildProcess.Failure(description: "Janus's AudioBridge plugin or HTTP transport not found (Debian package janus)")
        }
        self.directory = directory
        port = try freeLoopbackPort()
        try Self.writeConfiguration(directory: directory, library: library, httpPort: port)
        child = try ChildProcess(path: executable, arguments: ["-C", directory + "/janus.jcfg", "-F", directory, "-N"],
                                 pipeStdin: false, pipeStdout: false, stderrPath: directory + "/janus.stderr")
        client = JanusHTTPClient(port: port)
        let deadline = wallSeconds() + startTimeoutSeconds
        var ready = false
        while !ready && wallSeconds() < deadline {
            if child.waitExit(timeoutMs: 1) {
                throw ChildProcess.Failure(description: "janus exited at start (log: \(directory)/janus.log)")
            }
            ready = (try? client.get("/janus/info")) != nil
            if !ready { usleep(100_000) }
        }
        guard ready else {
            child.terminate()
            throw ChildProcess.Failure(description: "janus did not answer on 127.0.0.1:\(port) within \(Int(startTimeoutSeconds)) s (log: \(directory)/janus.log)")
        }
        do {
            session = try Self.id(in: client.post("/janus", ["janus": "create", "transaction": "session"]), "create")
            controlHandle = try Self.id(in: client.post("/janus/\(session)", ["janus": "attach", "plugin": "janus.plugin.audiobridge",
                                                                               "transaction": "control"]), "attach")
        } catch {
            child.terminate()
            throw error
        }
        startKeepalives()
    }

    deinit { stop() }

    /// The configuration files: the core with only the two modules (the plugin and
    /// transport folders hold links to just those), the HTTP transport on 127.0.0.1, and
    /// the AudioBridge with no static room and its RTP ports on loopback.
    private static func writeConfiguration(directory: String, library: String, httpPort: UInt16) throws {
        let manager = FileManager.default
        for folder in ["plugins", "transports", "none"] {
            try manager.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
        }
        try manager.createSymbolicLink(atPath: directory + "/plugins/libjanus_audiobridge.so",
                                       withDestinationPath: library + "/plugins/libjanus_audiobridge.so")
        try manager.createSymbolicLink(atPath: directory + "/transports/libjanus_http.so",
                                       withDestinationPath: library + "/transports/libjanus_http.so")
        let core = """
            general: {
            \tconfigs_folder = "\(directory)"
            \tplugins_folder = "\(directory)/plugins"
            \ttransports_folder = "\(directory)/transports"
            \tevents_folder = "\(directory)/none"
            \tloggers_folder = "\(directory)/none"
            \tlog_to_stdout = false
            \tlog_to_file = "\(directory)/janus.log"
            \tdebug_level = 4
            \tdebug_colors = false
            \tdebug_timestamps = true
            \tsession_timeout = 60
            }
            certificates: {
            }
            media: {
            \trtp_port_range = "45000-45999"
            }
            nat: {
            \tnice_debug = false
            \tice_enforce_list = "lo"
            \tignore_mdns = true
            }
            plugins: {
            }
            transports: {
            }
            loggers: {
            }
            events: {
            \tbroadcast = false
            }

            """
        let http = """
            general: {
            \tjson = "plain"
            \tbase_path = "/janus"
            \thttp = true
            \tport = \(httpPort)
            \tip = "127.0.0.1"
            \thttps = false
            \tevents = false
            }
            admin: {
            \tadmin_http = false
            \tadmin_https = false
            }

            """
        let audioBridge = """
            general: {
            \trtp_port_range = "\(rtpPortRange)"
            \tlocal_ip = "127.0.0.1"
            \tevents = false
            }

            """
        for (name, text) in [("janus.jcfg", core), ("janus.transport.http.jcfg", http), ("janus.plugin.audiobridge.jcfg", audioBridge)] {
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
    }

    /// User plus system CPU seconds of Janus (every thread: the room's mixer, the
    /// participants' RTP threads, the transport).
    func cpuSeconds() -> Double { child.cpuSeconds() ?? .nan }

    /// Creates a room mixing at `sampleRate` (16000 or 48000) that takes plain-RTP
    /// participants; its id.
    func createRoom(sampleRate: Int) throws -> Int64 {
        let reply = try message(controlHandle, ["request": "create", "sampling_rate": sampleRate, "allow_rtp_participants": true,
                                                "audiolevel_ext": false, "record": false, "is_private": true])
        guard let data = Self.pluginData(reply), data["audiobridge"] as? String == "created", let room = (data["room"] as? NSNumber)?.int64Value else {
            throw ChildProcess.Failure(description: "Janus did not create the room: \(reply)")
        }
        handles[room] = []
        return room
    }

    /// Joins one plain-RTP participant to `room` on a handle of its own: Janus sends the
    /// participant's mix to `receiveOn`, encoding with `complexity` (the join's `quality`).
    /// The address Janus receives the participant's RTP on.
    func join(room: Int64, receiveOn: SocketAddress, payloadType: UInt8, complexity: Int) throws -> SocketAddress {
        let handle = try Self.id(in: post("/janus/\(session)", ["janus": "attach", "plugin": "janus.plugin.audiobridge"]), "attach")
        handles[room, default: []].append(handle)
        let transaction = newTransaction()
        let ack = try client.post("/janus/\(session)/\(handle)", [
            "janus": "message", "transaction": transaction,
            "body": ["request": "join", "room": room, "display": "load-\(receiveOn.port)", "muted": false, "quality": complexity,
                     "rtp": ["ip": receiveOn.hostDescription, "port": Int(receiveOn.port), "payload_type": Int(payloadType), "fec": false]] as [String: Any],
        ])
        guard ack["janus"] as? String == "ack" else { throw ChildProcess.Failure(description: "Janus refused the join: \(ack)") }
        let event = try awaitEvent(transaction: transaction)
        guard let data = Self.pluginData(event), data["audiobridge"] as? String == "joined",
              let rtp = data["rtp"] as? [String: Any], let ip = rtp["ip"] as? String, let port = (rtp["port"] as? NSNumber)?.intValue,
              let port16 = UInt16(exactly: port), let address = SocketAddress(host: ip, port: port16) else {
            throw ChildProcess.Failure(description: "Janus's answer to a plain-RTP join has no RTP address: \(event)")
        }
        return address
    }

    /// Destroys `room` (Janus drops its participants) and detaches their handles.
    func destroyRoom(_ room: Int64) throws {
        _ = try message(controlHandle, ["request": "destroy", "room": room])
        for handle in handles.removeValue(forKey: room) ?? [] {
            _ = try? post("/janus/\(session)/\(handle)", ["janus": "detach"])
        }
    }

    /// Ends the session, stops the keepalives and Janus (SIGTERM, SIGKILL after a second).
    func stop() {
        if !keepalives.stop.exchange(true, ordering: .acquiringAndReleasing) {
            _ = try? post("/janus/\(session)", ["janus": "destroy"])
            for _ in 0..<50 where !keepalives.done.load(ordering: .acquiring) { usleep(20_000) }
        }
        child.terminate()
    }

    // MARK: The API

    /// A synchronous plugin request on `handle`: Janus answers with `success` and the
    /// plugin's data in the same response.
    private func message(_ handle: Int64, _ body: [String: Any]) throws -> [String: Any] {
        let reply = try post("/janus/\(session)/\(handle)", ["janus": "message", "body": body])
        guard reply["janus"] as? String == "success" else { throw ChildProcess.Failure(description: "Janus refused \(body["request"] ?? "?"): \(reply)") }
        if let data = Self.pluginData(reply), let error = data["error"] as? String {
            throw ChildProcess.Failure(description: "AudioBridge refused \(body["request"] ?? "?"): \(error)")
        }
        return reply
    }

    private func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        var body = body
        body["transaction"] = newTransaction()
        let reply = try client.post(path, body)
        if reply["janus"] as? String == "error" { throw ChildProcess.Failure(description: "Janus: \(reply)") }
        return reply
    }

    private func newTransaction() -> String {
        nextTransaction += 1
        return "t\(nextTransaction)"
    }

    /// Long-polls the session's events until the one answering `transaction`; the others
    /// (other participants' joins, told to everyone in the room) are dropped. Bounded:
    /// Janus answers an empty long poll after 30 s, the client gives up after 10.
    private func awaitEvent(transaction: String) throws -> [String: Any] {
        for _ in 0..<200 {
            for event in try client.get("/janus/\(session)?maxev=100") where event["transaction"] as? String == transaction {
                return event
            }
        }
        throw ChildProcess.Failure(description: "no answer from Janus to \(transaction)")
    }

    private func startKeepalives() {
        let client = self.client, session = self.session, flags = keepalives
        // Janus ends a session after 60 s without a request (session_timeout); rooms live
        // longer than that over a whole run.
        Thread.detachNewThread {
            var last = wallSeconds()
            while !flags.stop.load(ordering: .acquiring) {
                usleep(100_000)
                guard wallSeconds() - last >= 15 else { continue }
                last = wallSeconds()
                _ = try? client.post("/janus/\(session)", ["janus": "keepalive", "transaction": "keepalive"])
            }
            flags.done.store(true, ordering: .releasing)
        }
    }

    /// Shared with the keepalive thread: stop it, and it says when it has.
    private final class KeepaliveFlags: Sendable {
        let stop = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
    }

    private static func pluginData(_ reply: [String: Any]) -> [String: Any]? {
        (reply["plugindata"] as? [String: Any])?["data"] as? [String: Any]
    }

    private static func id(in reply: [String: Any], _ what: String) throws -> Int64 {
        guard reply["janus"] as? String == "success", let id = ((reply["data"] as? [String: Any])?["id"] as? NSNumber)?.int64Value else {
            throw ChildProcess.Failure(description: "Janus refused \(what): \(reply)")
        }
        return id
    }
}

extension JanusAudioBridge: ConferenceMixerUnderTest {
    var name: String { "Janus AudioBridge" }

    func openRoom(participants: [SocketAddress], settings: ConferenceCodecSettings) throws -> [SocketAddress] {
        guard openedRoom == nil else { throw ChildProcess.Failure(description: "a Janus room is open already") }
        let room = try createRoom(sampleRate: settings.sampleRate)
        openedRoom = room
        return try participants.map { try join(room: room, receiveOn: $0, payloadType: settings.payloadType, complexity: settings.complexity) }
    }

    func tickLateness(overLast seconds: Double) -> (p50: Double, p99: Double)? { nil }

    func stepNote() -> String? { nil }

    func closeRoom() throws {
        guard let room = openedRoom else { return }
        openedRoom = nil
        try destroyRoom(room)
    }
}
