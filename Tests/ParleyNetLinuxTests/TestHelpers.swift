import Glibc
import Synchronization
@testable import ParleyNetCore
@testable import ParleyNetLinux

/// Polls `condition` every millisecond until it holds or `timeout` passes (a safety net,
/// never an assertion about speed). Returns the final value of `condition`.
@discardableResult
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline { return condition() }
        usleep(1000)
    }
    return true
}

/// Number of open descriptors of this process.
func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while readdir(directory) != nil { count += 1 }
    return count - 3 // ".", ".." and the directory stream itself
}

/// What a socket is (e.g. `socket:[1234]`, `anon_inode:[eventpoll]`), nil when `fd` is closed.
func descriptorTarget(_ fd: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    let n = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// True when no open descriptor of this process refers to `target`.
func noDescriptor(refersTo target: String) -> Bool {
    guard let directory = opendir("/proc/self/fd") else { return false }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if let fd = Int32(name), descriptorTarget(fd) == target { return false }
    }
    return true
}

/// A numbered test datagram: 4-byte big-endian sequence, then bytes derived from it.
func testDatagram(_ sequence: Int, size: Int = 172) -> [UInt8] {
    var bytes: [UInt8] = [0x80, 0, 0, 0]
    bytes[1] = UInt8(truncatingIfNeeded: sequence >> 16)
    bytes[2] = UInt8(truncatingIfNeeded: sequence >> 8)
    bytes[3] = UInt8(truncatingIfNeeded: sequence)
    for i in 4..<size { bytes.append(UInt8(truncatingIfNeeded: sequence &* 31 &+ i)) }
    return bytes
}

/// The sequence number of a ``testDatagram(_:size:)``, or nil if its bytes are not intact.
func checkedSequence(_ payload: UnsafeRawBufferPointer, size: Int = 172) -> Int? {
    guard payload.count == size, payload[0] == 0x80 else { return nil }
    let sequence = Int(payload[1]) << 16 | Int(payload[2]) << 8 | Int(payload[3])
    for i in 4..<size where payload[i] != UInt8(truncatingIfNeeded: sequence &* 31 &+ i) { return nil }
    return sequence
}

/// Receives into `batch` until `expected` datagrams arrived or 5 s passed; returns copies.
func receiveDatagrams(_ socket: UDPSocket, _ batch: UDPReceiveBatch, expected: Int) throws -> [([UInt8], SocketAddress)] {
    var received: [([UInt8], SocketAddress)] = []
    waitUntil {
        while (try? socket.receive(into: batch)) ?? 0 > 0 {
            batch.forEach { payload, source in received.append((Array(payload), source)) }
        }
        return received.count >= expected
    }
    return received
}

/// A lock-protected value for handlers running on a loop thread.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
    var value: Value { storage.withLock { $0 } }
}
