import Glibc
import ParleyNetCore
import ParleySDKCore

extension ParleyServerEndpoint {
    /// The server's address: an IP literal as it is, `localhost` as 127.0.0.1, other
    /// names through the system resolver (first address).
    func resolve() throws(ParleyClientError) -> SocketAddress {
        if let literal = SocketAddress(host: host, port: port) { return literal }
        if host.lowercased() == "localhost" { return .ipv4Loopback(port: port) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw ParleyClientError(code: "server_unreachable", message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let raw = current.pointee.ai_addr {
                if current.pointee.ai_family == AF_INET {
                    let bytes = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) } }
                    if let address = SocketAddress(hostBytes: bytes, port: port) { return address }
                } else if current.pointee.ai_family == AF_INET6 {
                    let bytes = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) } }
                    if let address = SocketAddress(hostBytes: bytes, port: port) { return address }
                }
            }
            entry = current.pointee.ai_next
        }
        throw ParleyClientError(code: "server_unreachable", message: "no address for \(host)")
    }
}
