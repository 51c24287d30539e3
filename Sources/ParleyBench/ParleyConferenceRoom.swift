import Foundation
import ParleyNetCore

/// parleyd's conference room as the `conference` group's mixer under test: this executable
/// again as `ParleyBench conference-room-host` (BenchConferenceRoomHost.swift), a process of
/// its own whose CPU is read from /proc like Janus's. It runs the product's room
/// (`ConferenceRoomHost`) with plain-RTP legs, and reports the mixer's own tick lateness
/// and encode counters.
final class ParleyConferenceRoom {
    let child: ChildProcess
    /// The host's counters read at the last `tickLateness`, for the step's note.
    private var lastReport: ConferenceRoomHost.Report?
    private var roomOpen = false

    /// Starts the host (its stderr in `directory`) and waits for nothing: it reads its
    /// first command when `openRoom` sends it.
    init(directory: String) throws {
        guard let executable = currentExecutablePath() else {
            throw ChildProcess.Failure(description: "cannot find this executable to start conference-room-host")
        }
        child = try ChildProcess(path: executable, arguments: ["conference-room-host"], pipeStdin: true, pipeStdout: true,
                                 stderrPath: directory + "/room-host.stderr")
    }

    deinit { stop() }

    /// One command and its answer line (at most `timeoutMs`); throws on no answer or an
    /// `error` line.
    private func request(_ command: String, expecting prefix: String, timeoutMs: Int32 = 10_000) throws -> String {
        child.write(command + "\n")
        guard let line = child.readLine(timeoutMs: timeoutMs) else {
            throw ChildProcess.Failure(description: "conference-room-host did not answer \(command.prefix(20))")
        }
        guard line.hasPrefix(prefix) else { throw ChildProcess.Failure(description: "conference-room-host: \(line)") }
        return String(line.dropFirst(prefix.count))
    }

    /// The host's counters of the open room, nil when it has none or they do not parse.
    func report() -> ConferenceRoomHost.Report? {
        guard let json = try? request("counters", expecting: "counters ") else { return nil }
        return try? JSONDecoder().decode(ConferenceRoomHost.Report.self, from: Data(json.utf8))
    }
}

extension ParleyConferenceRoom: ConferenceMixerUnderTest {
    var name: String { "Parley room" }

    func cpuSeconds() -> Double { child.cpuSeconds() ?? .nan }

    func openRoom(participants: [SocketAddress], settings: ConferenceCodecSettings) throws -> [SocketAddress] {
        guard !roomOpen else { throw ChildProcess.Failure(description: "a Parley room is open already") }
        lastReport = nil
        // The room's legs encode at the load's complexity, Janus's `quality`: the same codec
        // settings on both sides.
        let answer = try request("open \(settings.sampleRate) \(settings.complexity) " + participants.map(\.description).joined(separator: " "),
                                 expecting: "ports ")
        let ports = answer.split(separator: " ").compactMap { UInt16($0) }
        guard ports.count == participants.count else {
            throw ChildProcess.Failure(description: "conference-room-host gave \(ports.count) ports for \(participants.count) participants")
        }
        roomOpen = true
        return ports.map { SocketAddress.ipv4Loopback(port: $0) }
    }

    /// The mixer's lateness over its kept ticks (the room is fresh each step, so those are
    /// the step's warm-up and window, up to 1024 ticks).
    func tickLateness(overLast seconds: Double) -> (p50: Double, p99: Double)? {
        lastReport = report()
        return lastReport.map { ($0.latenessP50Milliseconds / 1e3, $0.latenessP99Milliseconds / 1e3) }
    }

    func stepNote() -> String? {
        guard let report = lastReport else { return nil }
        return "Parley room: Opus complexity \(report.opusComplexities.map(String.init).joined(separator: ",")), \(report.ticks) ticks, \(report.lateTicks) late (> 5 ms), \(report.skippedTicks) skipped, lateness p50/p99/max "
            + "\(fixed(report.latenessP50Milliseconds, 2))/\(fixed(report.latenessP99Milliseconds, 2))/\(fixed(report.latenessMaximumMilliseconds, 1)) ms; "
            + "encodes per tick: \(fixed(report.sharedEncodesPerTick, 2)) shared, \(fixed(report.talkerEncodesPerTick, 2)) N-1; "
            + "\(report.talkers) talkers now; \(report.datagramsDropped) datagrams dropped, \(report.encodeFailures) encode failures"
            + "\n               " + Self.loopNote(report)
    }

    /// What the room cost its loop per tick: its handlers run by kind, the loop's sleeps
    /// (`epoll_wait` that blocked: each ends in a real wake-up) and the datagrams per
    /// sleep, preemptions, and the loop thread's CPU split into the ticks and the rest
    /// (receiving, and the loop's own waiting and waking).
    static func loopNote(_ report: ConferenceRoomHost.Report) -> String {
        guard report.ticks > 0 else { return "Parley loop: no ticks" }
        let ticks = Double(report.ticks)
        let perTick = { (value: Double) in fixed(value / ticks, 1) }
        let microsecondsPerTick = { (seconds: Double) in fixed(seconds * 1e6 / ticks, 0) }
        let perSleep = report.voluntarySwitches > 0 ? Double(report.datagramsRead) / Double(report.voluntarySwitches) : 0
        return "Parley loop per tick: \(fixed(report.wakeUpsPerTick, 1)) handler runs (\(perTick(Double(report.receiveWakeUps))) socket, "
            + "\(perTick(Double(report.clockWakeUps))) room clock, \(perTick(Double(report.legTimerWakeUps))) leg timer), "
            + "\(fixed(report.datagramsPerReceiveWakeUp, 2)) datagrams per socket run; \(perTick(Double(report.voluntarySwitches))) sleeps "
            + "(\(fixed(perSleep, 1)) datagrams per sleep), \(perTick(Double(report.involuntarySwitches))) preemptions; "
            + "thread CPU \(microsecondsPerTick(report.loopCPUSeconds)) us = ticks \(microsecondsPerTick(report.tickCPUSeconds)) + "
            + "the rest \(microsecondsPerTick(report.loopCPUSeconds - report.tickCPUSeconds)) (socket handlers "
            + "\(microsecondsPerTick(report.receiveSeconds)) us wall)"
    }

    func closeRoom() throws {
        guard roomOpen else { return }
        roomOpen = false
        _ = try request("close", expecting: "closed")
    }

    func stop() {
        child.write("stop\n")
        if !child.waitExit(timeoutMs: 2000) { child.terminate() }
    }
}
