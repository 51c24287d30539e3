import Glibc
import ParleyNetCore

/// The samples of one scrape of parleyd's `GET /metrics` (Prometheus text format 0.0.4), by
/// series: `name` or `name{labels}` as written, and its value. Comment lines and lines that
/// are not a sample are skipped.
struct MetricsSamples: Equatable {
    let series: [String: Double]

    /// A scrape larger than this is not parleyd's.
    static let maximumBytes = 1 << 20

    init(text: String) {
        var series: [String: Double] = [:]
        guard text.utf8.count <= Self.maximumBytes else {
            self.series = series
            return
        }
        // A sample starts with its metric name: comments, blank and indented lines do not.
        for line in text.split(separator: "\n") where line.first.map({ $0.isLetter || $0 == "_" || $0 == ":" }) == true {
            // The value follows the last space (label values may hold spaces; a timestamp
            // after the value is not written by parleyd).
            guard let space = line.lastIndex(of: " ") else { continue }
            let name = line[..<space]
            let valueText = line[line.index(after: space)...]
            guard !name.isEmpty, let value = Self.value(valueText) else { continue }
            series[String(name)] = value
        }
        self.series = series
    }

    private static func value(_ text: Substring) -> Double? {
        switch text {
        case "NaN": .nan
        case "+Inf": .infinity
        case "-Inf": -.infinity
        default: Double(text)
        }
    }

    /// The sum over every series of `family` (the bare name and each `family{...}`); 0 when
    /// absent.
    func total(_ family: String) -> Double {
        series.reduce(0) { sum, entry in
            entry.key == family || entry.key.hasPrefix(family + "{") ? sum + entry.value : sum
        }
    }

    /// `GET /metrics` from parleyd at `address` (IPv4), blocking at most about 5 s; nil when
    /// it does not answer 200.
    static func scrape(_ address: SocketAddress) -> MetricsSamples? {
        let bytes = address.hostBytes
        guard bytes.count == 4 else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = address.port.bigEndian
        target.sin_addr.s_addr = (UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])).bigEndian
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET /metrics HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return nil }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while response.count <= maximumBytes {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            response += chunk[..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let body = text.range(of: "\r\n\r\n") else { return nil }
        return MetricsSamples(text: String(text[body.upperBound...]))
    }
}
