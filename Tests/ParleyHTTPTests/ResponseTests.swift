import Testing
import Foundation
@testable import ParleyHTTP

@Suite("HTTP/1.1 response serializer")
struct ResponseTests {
    @Test("RFC 9112 §4, §6.2: status line, headers, Content-Length, body")
    func contentLength() throws {
        var response = HTTPResponse.text(status: 200, "ok")
        try response.headers.add(name: "X-Request-Id", value: "7")
        let text = String(decoding: response.serialized(), as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nX-Request-Id: 7\r\nContent-Length: 2\r\n\r\nok")
    }

    @Test("Connection: close when the connection will not be kept; HEAD omits the body")
    func closeAndHead() throws {
        let response = HTTPResponse.json(status: 404, body: Array("{}".utf8))
        let closing = String(decoding: response.serialized(keepAlive: false), as: UTF8.self)
        #expect(closing.hasSuffix("Content-Length: 2\r\nConnection: close\r\n\r\n{}"))
        let head = String(decoding: response.serialized(keepAlive: true, headRequest: true), as: UTF8.self)
        #expect(head.hasSuffix("Content-Length: 2\r\n\r\n"))
    }

    @Test("204 carries no Content-Length and no body")
    func noContent() throws {
        let response = try HTTPResponse(status: 204, body: [1, 2])
        #expect(String(decoding: response.serialized(), as: UTF8.self) == "HTTP/1.1 204 No Content\r\n\r\n")
    }

    @Test("RFC 9112 §7.1: chunked response parses back as the same body")
    func chunkedRoundTrip() throws {
        let response = try HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"])
        var wire = response.serializedHead(chunked: true)
        #expect(String(decoding: wire, as: UTF8.self).contains("Transfer-Encoding: chunked\r\n"))
        let head = wire.count
        wire += HTTPChunkedEncoder.chunk(Array("hello ".utf8)) + HTTPChunkedEncoder.chunk([]) + HTTPChunkedEncoder.chunk(Array("world".utf8))
        wire += HTTPChunkedEncoder.end(trailers: ["X-Sum": "1"])
        // Reuse the request parser's chunk decoder on the body part.
        var parser = HTTPRequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + wire[head...])
        let request = try #require(try parser.next())
        #expect(request.body == Array("hello world".utf8))
        #expect(request.trailers.first("x-sum") == "1")
    }

    @Test("Builders refuse header injection and bad statuses")
    func injection() {
        var headers = HTTPHeaders()
        #expect(throws: HTTPError.self) { try headers.add(name: "X", value: "a\r\nSet-Cookie: b") }
        #expect(throws: HTTPError.self) { try headers.add(name: "X Y", value: "a") }
        #expect(throws: HTTPError.self) { try HTTPResponse(status: 42) }
        #expect(throws: HTTPError.self) { try HTTPResponse(status: 200, reason: "OK\r\nX: y") }
    }

    @Test("Parsed request and error encode to stable JSON")
    func json() throws {
        let request = try parseAll("POST /a?b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi")[0]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(request), as: UTF8.self)
        #expect(json.contains(#""body":"6869""#))
        #expect(json.contains(#""version":"HTTP\/1.1""#))
        do {
            _ = try parseAll("GET / HTTP/1.1\r\n\r\n")
            Issue.record("missing Host accepted")
        } catch {
            let errorJSON = String(decoding: try encoder.encode(error), as: UTF8.self)
            #expect(errorJSON.contains(#""kind":"missingHost""#))
            #expect(errorJSON.contains(#""status":400"#))
        }
    }

    @Test("Parser refusals are JSON errors with a code for the status; the message is escaped JSON")
    func refusalsAreJSON() throws {
        let response = HTTPResponse.jsonError(status: 413, message: "body of 2000000 bytes \"over\" \\ limit\n")
        #expect(response.status == 413)
        #expect(response.headers.first("Content-Type") == "application/json")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
        #expect(object == ["code": "too_large", "message": "body of 2000000 bytes \"over\" \\ limit\n"])
        for (status, code) in [(400, "bad_request"), (414, "uri_too_long"), (431, "headers_too_large"), (501, "not_implemented"), (505, "http_version_not_supported")] {
            let body = String(decoding: HTTPResponse.jsonError(status: status, message: "m").body, as: UTF8.self)
            #expect(body == #"{"code":"\#(code)","message":"m"}"#)
        }
    }
}
