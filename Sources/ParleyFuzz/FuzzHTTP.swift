import ParleyHTTP

/// Parses the input as a stream of HTTP/1.1 requests twice, once in one piece and once
/// in chunks of varying size: an incremental parser must give the same requests (or the
/// same error) however the bytes are split. Each parsed request's JSON form and a
/// response for it are produced too, which must not trap.
func fuzzHTTP(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let limits = HTTPRequestParser.Limits(maxRequestLineLength: 512, maxHeadSize: 2048, maxHeaderCount: 32, maxBodySize: 4096)
    let whole = parseStream([bytes[...]], limits: limits)
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    var size = 1
    while start < bytes.count {
        let end = min(bytes.count, start + size)
        pieces.append(bytes[start..<end])
        start = end
        size = size % 7 + 1
    }
    let split = parseStream(pieces, limits: limits)
    guard whole.requests == split.requests else { fatalError("requests differ when the input is split") }
    guard whole.error == split.error else { fatalError("errors differ when the input is split: \(String(describing: whole.error)) vs \(String(describing: split.error))") }
    for request in whole.requests {
        _ = HTTPResponse.text(status: 200, request.path).serialized(for: request)
    }
}

private func parseStream(_ pieces: [ArraySlice<UInt8>], limits: HTTPRequestParser.Limits) -> (requests: [HTTPRequest], error: HTTPError?) {
    var parser = HTTPRequestParser(limits: limits)
    var requests: [HTTPRequest] = []
    for piece in pieces {
        parser.append(piece)
        do {
            while let request = try parser.next() {
                requests.append(request)
                if requests.count > 1000 { fatalError("more than 1000 requests from a small input") }
            }
        } catch {
            return (requests, error)
        }
    }
    return (requests, nil)
}
