import Dispatch
import Testing
import Glibc
import ParleyNetLinux
@testable import ParleyEdgeIO

/// Tests that change what the whole process may hold (its descriptor limit), so they run in
/// `make test`'s one-at-a-time pass (`--filter SoloTests`) with nothing else beside them.
@Suite(.serialized) enum SoloTests {}

extension SoloTests {
    /// The edge when the process is out of descriptors (`EMFILE`): the reserve answers a
    /// pending client with 503, and without a reserve the listener backs off instead of
    /// spinning on a level-triggered listener that stays readable.
    @Suite struct EdgeDescriptorExhaustionTests {
        @Test func outOfDescriptorsANewClientGets503AndTheListenerDoesNotSpin() throws {
            // Descriptors held while the server starts and freed after, so that its own
            // (the reserve among them) get numbers above free ones the test can hand out.
            let below = DescriptorFillers()
            defer { below.closeAll() }
            below.fill(count: 32)
            let nullsBefore = devNullDescriptors()
            let server = try makeServer { $0.loopCount = 1 }
            defer { server.shutdown() }
            let address = server.localAddresses[0]
            // Served once, so the loop has run its set-up (listener and reserve) before the limit drops.
            let warm = try RawClient(address)
            try warm.send("GET /warm HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(warm.readToEnd())
            #expect(warm.responses.first?.status == 200)
            warm.socket.close()
            // The server closes its end on its loop, after the client's FIN: wait for it, or
            // the descriptor it frees would let the server accept below.
            try #require(waitUntil { server.connectionCount == 0 })
            let reserves = devNullDescriptors().subtracting(nullsBefore)
            try #require(reserves.count == 1, "the edge should hold one reserve descriptor, holds \(reserves.count)")
            let reserve = reserves.first!
            below.closeAll()

            let limit = DescriptorLimit()
            defer { limit.restore() }
            let fillers = DescriptorFillers()
            defer { fillers.closeAll() }
            try limit.lower(to: openDescriptorCount() + 64)
            fillers.fillUntilExhausted()
            try #require(!fillers.isEmpty, "could not exhaust the descriptors")

            // One descriptor for the client, none for the server: the reserve answers.
            fillers.closeOne()
            let upgrade = try RawClient(address)
            try upgrade.send("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            #expect(upgrade.readToEnd(timeout: .seconds(5)), "no answer while out of descriptors")
            let refusal = upgrade.responses.first
            #expect(refusal?.status == 503)
            #expect(refusal?.head.contains("Retry-After: 5") == true)
            #expect(refusal?.body == #"{"code":"unavailable","message":"the server is out of file descriptors; retry later"}"#)
            #expect(server.statistics.refused >= 1)
            #expect(server.statistics.acceptFailures >= 1)
            // The server takes its reserve back in the loop turn that answered: wait for a
            // turn queued behind it before the client's descriptor comes free, or the reserve
            // could land on that lower number, below the limit the next step sets from
            // `reserve`. (Nothing can look at /proc/self/fd here: no descriptor is free.)
            let turn = DispatchSemaphore(value: 0)
            #expect(server.group.loops[0].execute { turn.signal() })
            #expect(turn.wait(timeout: .now() + 5) == .success, "the edge's loop did not come round")
            upgrade.socket.close()
            fillers.fillUntilExhausted()

            // Now take the reserve away too: its descriptor number is put above the limit,
            // so freeing it gives the server nothing it may use. A pending client then
            // cannot be answered; the loop must wait in back-off, not retry in a spin.
            try limit.lower(to: Int(reserve))
            fillers.closeOne()
            let waiting = try RawClient(address)
            let before = server.statistics.acceptFailures
            let window = Duration.milliseconds(600)
            let start = ContinuousClock.now
            waitUntil(timeout: window) { false }
            let elapsed = start.duration(to: .now)
            let failures = server.statistics.acceptFailures - before
            // One failed accept per back-off at most (plus the one that started it);
            // a spinning listener fails thousands of times in this window.
            let bound = Int(elapsed / EdgeServer.acceptBackoff) + 3
            #expect(failures <= bound, "\(failures) failed accepts in \(elapsed) (at most \(bound) with back-off)")
            #expect(failures >= 1)

            // A descriptor comes free: within a back-off the server takes its reserve back
            // and answers the waiting client.
            fillers.closeOne()
            #expect(waiting.readToEnd(timeout: .seconds(5)), "the waiting client was never answered")
            #expect(waiting.responses.first?.status == 503)
            waiting.socket.close()
            fillers.closeAll()
            limit.restore()

            // With descriptors back, the server serves as before.
            let after = try RawClient(address)
            try after.send("GET /after HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(after.readToEnd())
            #expect(after.responses.first?.status == 200)
        }
    }
}

/// The process's `RLIMIT_NOFILE`, lowered for a test and put back.
final class DescriptorLimit {
    private var original = rlimit()
    private var lowered = false

    init() { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &original) }

    /// Sets the soft limit: new descriptors get numbers below `value`; open ones above it stay usable.
    func lower(to value: Int) throws {
        var limit = original
        limit.rlim_cur = rlim_t(min(UInt64(value), UInt64(original.rlim_max)))
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw DescriptorLimitError(errno: errno) }
        lowered = true
    }

    func restore() {
        guard lowered else { return }
        lowered = false
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &original)
    }
}

/// `/dev/null` descriptors opened until the process may open no more (bounded).
final class DescriptorFillers {
    private(set) var descriptors: [Int32] = []

    var isEmpty: Bool { descriptors.isEmpty }

    func fill(count: Int) {
        for _ in 0..<count {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            descriptors.append(fd)
        }
    }

    func fillUntilExhausted() {
        for _ in 0..<100_000 {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            descriptors.append(fd)
        }
    }

    /// Frees the lowest filler (a new descriptor takes the lowest free number).
    func closeOne() {
        guard let lowest = descriptors.min(), let index = descriptors.firstIndex(of: lowest) else { return }
        descriptors.remove(at: index)
        close(lowest)
    }

    func closeAll() {
        for fd in descriptors { close(fd) }
        descriptors = []
    }
}

struct DescriptorLimitError: Error {
    let errno: Int32
}

/// Open descriptors of this process.
func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while readdir(directory) != nil { count += 1 }
    return count - 3 // ".", ".." and the directory stream itself
}

/// The descriptors of this process open on `/dev/null` (the standard streams left out).
func devNullDescriptors() -> Set<Int32> {
    guard let directory = opendir("/proc/self/fd") else { return [] }
    defer { closedir(directory) }
    var found: Set<Int32> = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let fd = Int32(name), fd > 2 else { continue }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        if count > 0, String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "/dev/null" {
            found.insert(fd)
        }
    }
    return found
}
