import Foundation
import Glibc
import ParleyNetCore

// `ParleyBench conference-room-host`: parleyd's conference room (`ConferenceRoomHost`: the
// product's mixer, legs, media loop and sockets) as a process of its own, so the
// `conference` group reads its CPU from /proc/<pid>/stat exactly as it reads Janus's.
//
// Control on stdin, one command a line; one answer line each on stdout:
//   open <rate> <complexity> <address> ...
//                                         a room at 16000 or 48000 Hz, one plain-RTP leg per
//                                         participant address (host:port, where it sends
//                                         from and receives its mix), its Opus encoders at
//                                         libopus complexity 0...10; answers
//                                         "ports <leg port> ..." in the same order, or "error ..."
//   counters                              "counters <JSON of ConferenceRoomHost.Report>", or
//                                         "counters null" with no room open
//   close                                 closes the room; answers "closed"
//   stop (or end of input)                exits
// A line is at most 64 KiB (about 3000 participants' addresses); a longer one ends the host.

/// Runs the room host on stdin and stdout; the process exit status.
func conferenceRoomHostMain() -> Int32 {
    let host: ConferenceRoomHost
    do { host = try ConferenceRoomHost() } catch {
        emitHostLine("error \(error)")
        return 1
    }
    defer { host.stop() }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    var pending: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        while let newline = pending.firstIndex(of: 10) {
            let line = String(decoding: pending[..<newline], as: UTF8.self)
            pending.removeFirst(newline + 1)
            let fields = line.split(separator: " ")
            switch fields.first {
            case "open"?:
                guard fields.count >= 4, let rate = Int(fields[1]), let complexity = Int(fields[2]) else {
                    emitHostLine("error open needs a rate, an Opus complexity and at least one address")
                    continue
                }
                let addresses = fields.dropFirst(3).compactMap { try? SocketAddress(parsing: String($0)) }
                guard addresses.count == fields.count - 3 else {
                    emitHostLine("error an address of the open line does not parse")
                    continue
                }
                do {
                    let ports = try host.openRoom(participants: addresses, sampleRate: rate, opusComplexity: complexity)
                    emitHostLine("ports " + ports.map { String($0.port) }.joined(separator: " "))
                } catch {
                    emitHostLine("error \(error)")
                }
            case "counters"?:
                let report = host.report()
                let json = report.flatMap { try? encoder.encode($0) }.map { String(decoding: $0, as: UTF8.self) } ?? "null"
                emitHostLine("counters " + json)
            case "close"?:
                host.closeRoom()
                emitHostLine("closed")
            case "stop"?:
                return 0
            default:
                emitHostLine("error unknown command: \(line.prefix(40))")
            }
        }
        guard pending.count < 65_536 else {
            emitHostLine("error a control line over 64 KiB")
            return 1
        }
        let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return 0 }
        pending += chunk[..<n]
    }
}

/// `ParleyBench conference-room-host`: runs the room host, then exits with its status.
func runConferenceRoomHostAndExit() -> Never { exit(conferenceRoomHostMain()) }

/// Writes one line to stdout unbuffered (the parent waits for it on a pipe).
private func emitHostLine(_ text: String) {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        bytes = bytes.dropFirst(n)
    }
}
