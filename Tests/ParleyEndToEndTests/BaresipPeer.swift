import Foundation
import ParleyNetCore
import ParleyMediaCore
import ParleyNetLinux

/// baresip 1.0 (Debian's baresip-core) as a real phone: one account that answers every
/// call at once, one codec (PCMU unless told), on free loopback ports, headless (ALSA's null device plays,
/// `ausine` sends a sine tone), recording what it receives with the `sndfile` module, and
/// driven through its `ctrl_tcp` module (netstrings of JSON commands: `sndcode` sends DTMF
/// as RFC 4733 events, `hangup` ends the call).
///
/// Its own log (standard output) says what happened: `Call established`, `received event:
/// 'K' (end=1)` for each DTMF key it receives, `Call with ... terminated`.
final class BaresipPeer: @unchecked Sendable {
    // Used from one test's thread; ManagedProcess synchronises itself.
    let process: ManagedProcess
    /// SIP over UDP (and TCP) on 127.0.0.1.
    let port: UInt16
    let controlPort: UInt16
    let directory: URL
    var recordings: URL { directory.appendingPathComponent("recordings") }

    /// - Parameters:
    ///   - user: the account's user part (`bob`, `+4615550101`): baresip takes only calls
    ///     whose Request-URI names it.
    ///   - tone: the frequency `ausine` sends (Hz).
    ///   - credentials: the digest account it answers 401/407 challenges with.
    ///   - mediaEncryption: baresip's `mediaenc` for the account (`srtp-mand`: SDES-keyed
    ///     SRTP only, RTP/SAVP; a call offering plain RTP is refused).
    ///   - codec: the one codec it offers and answers (`PCMU`, `PCMA`).
    init(user: String, tone: Int = 1000, credentials: (user: String, password: String)? = nil, mediaEncryption: String? = nil,
         codec: String = "PCMU") throws {
        // baresip binds SIP over UDP and TCP at the port and SIP over TLS at the next one
        // (and fails to start when that one is taken, which the kernel's pick for port 0
        // does not look at): both must be free.
        var sipPort = try ParleydInstance.freeLoopbackPort()
        for _ in 0..<50 where !(ParleydInstance.isFreeLoopbackPort(sipPort) && ParleydInstance.isFreeLoopbackPort(sipPort + 1)) {
            sipPort = try ParleydInstance.freeLoopbackPort()
        }
        port = sipPort
        var control = try ParleydInstance.freeLoopbackPort()
        while control == port || control == port + 1 { control = try ParleydInstance.freeLoopbackPort() }
        controlPort = control
        var media = try ParleydInstance.freeLoopbackPort()
        while abs(Int(media) - Int(port)) < 12 || abs(Int(media) - Int(control)) < 12 { media = try ParleydInstance.freeLoopbackPort() }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-baresip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("recordings"), withIntermediateDirectories: true)
        // ausine makes 48 kHz stereo only; baresip resamples to the codec. RTCP on its own
        // port, as most SIP phones do.
        let configuration = """
            poll_method epoll
            sip_listen 127.0.0.1:\(port)
            net_interface 127.0.0.1
            call_max_calls 1
            audio_player alsa,null
            audio_alert alsa,null
            audio_source ausine,\(tone)
            ausrc_srate 48000
            ausrc_channels 2
            auplay_srate 48000
            auplay_channels 1
            audio_level no
            rtp_ports \(media)-\(media + 10)
            rtcp_mux no
            jitter_buffer_delay 1-10
            rtp_stats no
            module_path /usr/lib/baresip/modules
            module g711.so
            module srtp.so
            module ausine.so
            module alsa.so
            module sndfile.so
            module_app account.so
            module_app menu.so
            module_app ctrl_tcp.so
            ctrl_tcp_listen 127.0.0.1:\(control)
            snd_path \(directory.appendingPathComponent("recordings").path)

            """
        try configuration.write(to: directory.appendingPathComponent("config"), atomically: true, encoding: .utf8)
        let auth = credentials.map { ";auth_user=\($0.user);auth_pass=\($0.password)" } ?? ""
        let encryption = mediaEncryption.map { ";mediaenc=\($0)" } ?? ""
        try "<sip:\(user)@127.0.0.1>\(auth)\(encryption);regint=0;answermode=auto;audio_codecs=\(codec)\n"
            .write(to: directory.appendingPathComponent("accounts"), atomically: true, encoding: .utf8)
        try "".write(to: directory.appendingPathComponent("contacts"), atomically: true, encoding: .utf8)
        process = try ManagedProcess(name: "baresip \(user)", executable: try Self.executable(), arguments: ["-f", directory.path])
        try process.waitForLine(timeout: 10, "'baresip is ready.'") { $0.contains("baresip is ready.") }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `127.0.0.1:PORT`.
    var address: String { "127.0.0.1:\(port)" }

    /// Waits until baresip says its call is up.
    func waitForCall(timeout: Double) throws {
        try process.waitForLine(timeout: timeout, "'Call established'") { $0.contains("Call established") }
    }

    /// Waits until baresip says its call ended (the BYE it took or sent was answered).
    func waitForCallEnd(timeout: Double) throws {
        try process.waitForLine(timeout: timeout, "'terminated'") { $0.contains("terminated (duration") }
    }

    /// The DTMF keys baresip received as RFC 4733 events, each once at its end.
    var receivedDigits: String {
        process.lines.compactMap { line -> Character? in
            guard let start = line.range(of: "received event: '"), line.hasSuffix("(end=1)") else { return nil }
            return line[start.upperBound...].first
        }.reduce(into: "") { $0.append($1) }
    }

    /// Sends `digits` as DTMF (RFC 4733 events on its call).
    func sendDTMF(_ digits: String) throws { try command("sndcode", digits) }

    /// Hangs its call up (BYE).
    func hangUp() throws { try command("hangup", "") }

    /// The WAV file of what baresip received and decoded (`sndfile`'s `...-dec.wav`; 8 kHz
    /// mono for PCMU). libsndfile writes its sizes when the call's audio closes, a moment
    /// after the call ended: this waits (at most 5 s) until the file holds audio.
    func receivedRecording() throws -> URL {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: recordings.path)) ?? []
            if let name = names.first(where: { $0.hasSuffix("-dec.wav") }) {
                let file = recordings.appendingPathComponent(name)
                if let wav = try? WAVFile.read(path: file.path), wav.samples.count >= wav.sampleRate { return file }
            }
            guard Date() < deadline else {
                throw ManagedProcess.Failure(description: "baresip recorded no audio in \(recordings.path): \(names)\n" + process.report)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Stops baresip with SIGKILL: its gentle stop (SIGTERM, or `quit`) waits for the
    /// last transactions' timers, 32 s after a BYE, and SIGINT and SIGTERM would stay
    /// pending anyway (the test's threads block them, and a child started with
    /// Foundation's Process inherits that mask). Read `receivedRecording()` first.
    func stop() { process.killHard() }

    var report: String { process.report }

    /// Runs one `ctrl_tcp` command: a netstring `LEN:{"command":..,"params":..,"token":..},`;
    /// throws unless baresip answers it ok within 5 s.
    @discardableResult
    func command(_ name: String, _ parameters: String) throws -> String {
        let socket = try TCPSocket.connect(to: .ipv4Loopback(port: controlPort), timeout: .seconds(5))
        defer { socket.close() }
        let body = try JSONSerialization.data(withJSONObject: ["command": name, "params": parameters, "token": name])
        var request = Array("\(body.count):".utf8) + Array(body)
        request.append(UInt8(ascii: ","))
        var offset = 0
        while offset < request.count {
            let written = try socket.write(request, from: offset)
            if written == 0, !socket.waitUntilWritable(timeout: .seconds(5)) { throw ManagedProcess.Failure(description: "ctrl_tcp does not read") }
            offset += written
        }
        // The answer may follow event notifications: read netstrings until the response.
        var received: [UInt8] = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while true {
            while let (object, consumed) = Self.netstring(in: received) {
                received.removeFirst(consumed)
                guard object["response"] as? Bool == true else { continue }
                guard object["ok"] as? Bool == true else {
                    throw ManagedProcess.Failure(description: "baresip refused \(name) \(parameters): \(object)\n" + process.report)
                }
                return object["data"] as? String ?? ""
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, socket.waitUntilReadable(timeout: remaining) else {
                throw ManagedProcess.Failure(description: "baresip did not answer \(name) within 5 s\n" + process.report)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            switch try socket.read(into: &chunk) {
            case .bytes(let count): received += chunk[..<count]
            case .endOfStream: throw ManagedProcess.Failure(description: "ctrl_tcp closed before answering \(name)")
            case .wouldBlock: break
            }
            guard received.count < 1 << 20 else { throw ManagedProcess.Failure(description: "ctrl_tcp sent more than 1 MiB") }
        }
    }

    /// The first complete netstring in `bytes` as a JSON object, and the bytes it took.
    private static func netstring(in bytes: [UInt8]) -> ([String: Any], Int)? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon < 10,
              let length = Int(String(decoding: bytes[..<colon], as: UTF8.self)),
              bytes.count >= colon + 1 + length + 1 else { return nil }
        let payload = Data(bytes[(colon + 1)..<(colon + 1 + length)])
        let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] ?? [:]
        return (object, colon + 1 + length + 1)
    }

    private static func executable() throws -> URL {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("baresip") }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ManagedProcess.Failure(description: "baresip is not installed: scripts/install-deps.sh installs it (Debian's baresip-core)")
        }
        return found
    }
}
