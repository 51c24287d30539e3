internal import CCurl
internal import Synchronization

/// libcurl must be initialized once per process before any thread uses it.
private let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

/// A blocking HTTP/2 client over one libcurl easy handle, so consecutive requests to the
/// same host reuse one connection (libcurl keeps it in the handle's connection cache).
///
/// Requests are serialized by a lock: one in flight at a time per client. `https://` URLs
/// negotiate HTTP/2 with ALPN and refuse to fall back silently only in the sense that the
/// answer's ``HTTPResponse/httpVersion`` says what was used; `http://` URLs use HTTP/2
/// with prior knowledge (h2c). `@unchecked Sendable`: the handle is touched only while
/// holding `lock`.
public final class HTTP2Client: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer
    private let lock = Mutex(())
    private let timeoutMilliseconds: Int
    private let caFile: String?
    private let allowsHTTP1: Bool

    /// - Parameters:
    ///   - timeoutMilliseconds: bound on each whole exchange, connect included.
    ///   - caFile: a PEM bundle to trust instead of the system's (tests with a TLS emulator).
    ///   - allowsHTTP1: speak HTTP/1.1 too, for servers that have no HTTP/2 (a customer's
    ///     backend): `http://` URLs then use HTTP/1.1, `https://` ones whatever ALPN
    ///     settles. Push providers are HTTP/2 only, so their clients leave it off.
    public init(timeoutMilliseconds: Int = 10_000, caFile: String? = nil, allowsHTTP1: Bool = false) throws(PushError) {
        guard curlGlobalInit == CURLE_OK else { throw PushError(.transport, "curl_global_init failed") }
        guard let handle = curl_easy_init() else { throw PushError(.transport, "curl_easy_init failed") }
        self.handle = handle
        self.timeoutMilliseconds = max(1, timeoutMilliseconds)
        self.caFile = caFile
        self.allowsHTTP1 = allowsHTTP1
    }

    deinit { curl_easy_cleanup(handle) }

    /// Sends `request` as a `POST` and waits for the whole answer. Transport failures
    /// (refused connection, timeout, TLS) throw ``PushError/Kind/transport``.
    public func send(_ request: PushRequest) throws(PushError) -> HTTPResponse {
        try lock.withLock { _ throws(PushError) in try perform(request) }
    }

    private func perform(_ request: PushRequest) throws(PushError) -> HTTPResponse {
        // Reset clears options but keeps the connection cache, which is what we want.
        curl_easy_reset(handle)
        let collector = ResponseCollector()
        let box = Unmanaged.passRetained(collector)
        defer { box.release() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        // Without this libcurl adds `Expect: 100-continue` to large bodies on HTTP/1.1.
        headerList = curl_slist_append(headerList, "expect:")
        for (name, value) in request.headers { headerList = curl_slist_append(headerList, "\(name): \(value)") }

        let prior = request.url.hasPrefix("http://")
        let wanted = prior ? (allowsHTTP1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) : CURL_HTTP_VERSION_2TLS
        var codes: [CURLcode] = []
        codes.append(parley_curl_setopt_string(handle, CURLOPT_URL, request.url))
        codes.append(parley_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(wanted)))
        codes.append(parley_curl_setopt_long(handle, CURLOPT_POST, 1))
        codes.append(parley_curl_setopt_large(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
        // COPYPOSTFIELDS copies POSTFIELDSIZE bytes now, so the array need not outlive this
        // call; the extra zero byte gives an empty body a valid pointer.
        var body = request.body
        body.append(0)
        codes.append(body.withUnsafeMutableBytes { parley_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) })
        codes.append(parley_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList))
        codes.append(parley_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds))
        codes.append(parley_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMilliseconds))
        // No SIGALRM-based DNS timeouts: we run on threads.
        codes.append(parley_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        codes.append(parley_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        if let caFile { codes.append(parley_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)) }
        codes.append(parley_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, collectBody))
        codes.append(parley_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, box.toOpaque()))
        codes.append(parley_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, collectHeader))
        codes.append(parley_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, box.toOpaque()))
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            throw PushError(.transport, "curl_easy_setopt: \(String(cString: curl_easy_strerror(failed)))")
        }

        let result = curl_easy_perform(handle)
        guard result == CURLE_OK else {
            throw PushError(.transport, "\(request.url): \(String(cString: curl_easy_strerror(result)))")
        }
        var status = 0
        var version = 0
        _ = parley_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        _ = parley_curl_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        let httpVersion: Int
        switch version {
        case CURL_HTTP_VERSION_2_0: httpVersion = 2
        case CURL_HTTP_VERSION_3: httpVersion = 3
        default: httpVersion = 1
        }
        return HTTPResponse(status: status, headers: collector.headers, body: collector.body, httpVersion: httpVersion)
    }
}

/// Where libcurl's callbacks put the answer of one exchange.
private final class ResponseCollector {
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    /// A provider's answer is small; a larger one is cut off (libcurl then fails the transfer).
    static let maxBodyBytes = 1 << 20
}

private func collectBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let data, let user else { return 0 }
    let collector = Unmanaged<ResponseCollector>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    guard collector.body.count + length <= ResponseCollector.maxBodyBytes else { return 0 }
    data.withMemoryRebound(to: UInt8.self, capacity: length) { collector.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    return length
}

private func collectHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let data, let user else { return 0 }
    let collector = Unmanaged<ResponseCollector>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    let line = data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    if let field = HTTPHeaderLine(line) {
        collector.headers[field.name] = field.value
    } else if line.starts(with: Array("HTTP/".utf8)) {
        // A status line starts a new header block (after a redirect or 100): start over.
        collector.headers = [:]
    }
    return length
}
