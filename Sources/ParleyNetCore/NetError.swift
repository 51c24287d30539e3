// errno names and strerror, which both C libraries have.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every failure ParleyNetCore and ParleyNetLinux report: a system call that failed (with its errno and the
/// errno's symbolic name), an address that does not parse, or a port range that is full.
///
/// `EAGAIN`/`EWOULDBLOCK` never surfaces as an error from the socket calls: they report
/// "would block" in their return value. `ECONNREFUSED` left behind by an ICMP port
/// unreachable is counted on the socket and otherwise ignored, as UDP is connectionless.
public struct NetError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case system(operation: String, errno: Int32)
        case invalidAddress(String)
        case portsExhausted(lower: UInt16, upper: UInt16)
        case invalidPortRange(lower: UInt16, upper: UInt16)
        case datagramTooLarge(size: Int, limit: Int)
        case shutDown
        case timedOut(operation: String)
        case writeQueueFull(limit: Int)
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    // Package-visible: the sockets and loops of ParleyNetLinux make these errors.

    /// A system call failed; `operation` names it (e.g. `"bind"`).
    package static func system(_ operation: String, errno: Int32) -> NetError {
        NetError(.system(operation: operation, errno: errno))
    }

    package static func invalidAddress(_ text: String) -> NetError { NetError(.invalidAddress(text)) }
    package static func portsExhausted(_ range: ClosedRange<UInt16>) -> NetError {
        NetError(.portsExhausted(lower: range.lowerBound, upper: range.upperBound))
    }
    package static func invalidPortRange(_ lower: UInt16, _ upper: UInt16) -> NetError {
        NetError(.invalidPortRange(lower: lower, upper: upper))
    }
    package static func datagramTooLarge(size: Int, limit: Int) -> NetError {
        NetError(.datagramTooLarge(size: size, limit: limit))
    }
    package static var shutDown: NetError { NetError(.shutDown) }
    package static func timedOut(_ operation: String) -> NetError { NetError(.timedOut(operation: operation)) }
    package static func writeQueueFull(limit: Int) -> NetError { NetError(.writeQueueFull(limit: limit)) }

    /// True when a connect or wait gave up after its timeout.
    public var isTimedOut: Bool {
        if case .timedOut = code { return true }
        return false
    }

    /// True when a TCP connection was closed because its peer did not read and the
    /// write queue passed its hard limit (back-pressure).
    public var isWriteQueueFull: Bool {
        if case .writeQueueFull = code { return true }
        return false
    }

    /// The errno of a failed system call, nil for other errors.
    public var errno: Int32? {
        if case .system(_, let value) = code { return value }
        return nil
    }

    /// The symbolic errno name, such as `"EMSGSIZE"`, nil for other errors.
    public var errnoName: String? { errno.map(NetError.name(ofErrno:)) }

    /// The system call that failed (`"bind"`, `"sendmmsg"`...), nil for other errors.
    public var operation: String? {
        if case .system(let operation, _) = code { return operation }
        return nil
    }

    /// True when the datagram was larger than the path or socket allows (`EMSGSIZE`),
    /// or larger than a send queue slot.
    public var isMessageTooLarge: Bool {
        switch code {
        case .system(_, let value): return value == EMSGSIZE
        case .datagramTooLarge: return true
        default: return false
        }
    }

    /// True when every port of a ``PortPool`` range is in use.
    public var isPortsExhausted: Bool {
        if case .portsExhausted = code { return true }
        return false
    }

    /// True when the address text did not parse.
    public var isInvalidAddress: Bool {
        if case .invalidAddress = code { return true }
        return false
    }

    /// True when the address was already in use (`EADDRINUSE`).
    public var isAddressInUse: Bool { errno == EADDRINUSE }

    /// True when the event loop was already shut down.
    public var isShutDown: Bool { code == .shutDown }

    public var description: String {
        switch code {
        case .system(let operation, let value):
            let message = strerror(value).map { String(cString: $0) } ?? "unknown error"
            return "\(operation) failed: \(NetError.name(ofErrno: value)) (\(message))"
        case .invalidAddress(let text):
            return "invalid socket address \"\(text)\": expected 1.2.3.4:port or [v6]:port"
        case .portsExhausted(let lower, let upper):
            return "no free UDP port in \(lower)...\(upper)"
        case .invalidPortRange(let lower, let upper):
            return "invalid port range \(lower)...\(upper): ports must be 1...65535, lower <= upper"
        case .datagramTooLarge(let size, let limit):
            return "datagram of \(size) bytes exceeds the \(limit)-byte slot"
        case .shutDown:
            return "event loop is shut down"
        case .timedOut(let operation):
            return "\(operation) timed out"
        case .writeQueueFull(let limit):
            return "peer does not read: write queue passed \(limit) bytes"
        }
    }

    /// Names for the errno values sockets and epoll actually produce; others print as a number.
    static func name(ofErrno value: Int32) -> String {
        switch value {
        case EAGAIN: return "EAGAIN"
        case EINTR: return "EINTR"
        case EBADF: return "EBADF"
        case EINVAL: return "EINVAL"
        case EMSGSIZE: return "EMSGSIZE"
        case ECONNREFUSED: return "ECONNREFUSED"
        case EADDRINUSE: return "EADDRINUSE"
        case EADDRNOTAVAIL: return "EADDRNOTAVAIL"
        case EAFNOSUPPORT: return "EAFNOSUPPORT"
        case EACCES: return "EACCES"
        case EPERM: return "EPERM"
        case ENOBUFS: return "ENOBUFS"
        case ENOMEM: return "ENOMEM"
        case EMFILE: return "EMFILE"
        case ENFILE: return "ENFILE"
        case ENETUNREACH: return "ENETUNREACH"
        case EHOSTUNREACH: return "EHOSTUNREACH"
        case ENOTSOCK: return "ENOTSOCK"
        case EEXIST: return "EEXIST"
        case ENOENT: return "ENOENT"
        case EDESTADDRREQ: return "EDESTADDRREQ"
        case ECONNRESET: return "ECONNRESET"
        case EPIPE: return "EPIPE"
        case ENOTCONN: return "ENOTCONN"
        case ETIMEDOUT: return "ETIMEDOUT"
        case ECONNABORTED: return "ECONNABORTED"
        default: return "errno \(value)"
        }
    }
}
