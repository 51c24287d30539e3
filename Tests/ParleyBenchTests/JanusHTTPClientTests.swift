import Testing
@testable import ParleyBench

/// Responses as Janus's HTTP transport (libmicrohttpd) writes them: chunked even on
/// `Connection: close`, or with a Content-Length.
@Suite struct JanusHTTPClientTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aChunkedBodyIsJoined() throws {
        let response = Self.bytes("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "a\r\n{\"janus\": \r\n9;ext=1\r\n\"success\"\r\n1\r\n}\r\n0\r\n\r\n")
        #expect(try JanusHTTPClient.body(ofResponse: response) == Self.bytes("{\"janus\": \"success\"}"))
    }

    @Test func aContentLengthCutsTheBody() throws {
        let response = Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}trailing")
        #expect(try JanusHTTPClient.body(ofResponse: response) == Self.bytes("{}"))
    }

    @Test(arguments: [
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n{}\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{}\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}",
        "",
    ])
    func whatIsNotAWholeOKResponseIsRefused(_ text: String) {
        #expect(throws: JanusHTTPClient.Failure.self) { try JanusHTTPClient.body(ofResponse: Self.bytes(text)) }
    }
}
