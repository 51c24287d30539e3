import Testing
@testable import ParleyWebSocket
import ParleyHTTP
import ParleyTestSupport

/// The opening handshake, RFC 6455 § 4, both sides.
@Suite("Opening handshake") struct HandshakeTests {
    static let request = RFC6455ExampleTests.requestText

    /// The sample request with `line` replaced by `replacement` (nil removes the line).
    private func requestBytes(replacing line: String? = nil, with replacement: String? = nil, adding extra: [String] = []) -> [UInt8] {
        var lines = Self.request.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        if let line, let index = lines.firstIndex(where: { $0.hasPrefix(line) }) {
            if let replacement { lines[index] = replacement } else { lines.remove(at: index) }
        }
        lines += extra
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    private func requestError(_ bytes: [UInt8]) -> WebSocketError? {
        do { _ = try WebSocketUpgradeRequest.parse(bytes); return nil } catch { return error }
    }

    // MARK: Reader

    @Test("§ 4.2.1: the reader waits for CRLF CRLF, byte at a time, and hands back what follows")
    func readerIncremental() throws {
        let frame = clientFrame(.text, "Hello")
        let stream = Array(Self.request.utf8) + frame
        var reader = WebSocketHandshakeReader()
        var result: WebSocketHandshakeReader.Progress = .needMoreBytes
        var fed = 0
        for byte in stream {
            result = try reader.append(CollectionOfOne(byte))
            fed += 1
            if result != .needMoreBytes { break }
        }
        #expect(fed == Self.request.utf8.count)
        #expect(result == .complete(head: Array(Self.request.utf8), remainder: []))
        // Whole at once: the frame bytes come back as the remainder.
        var whole = WebSocketHandshakeReader()
        #expect(try whole.append(stream) == .complete(head: Array(Self.request.utf8), remainder: frame))
        #expect(try whole.append([1, 2]) == .complete(head: Array(Self.request.utf8), remainder: [1, 2]))
        // Split at every point.
        for split in 0...stream.count {
            var reader = WebSocketHandshakeReader()
            let first = try reader.append(stream[..<split])
            let progress = first == .needMoreBytes ? try reader.append(stream[split...]) : first
            guard case .complete(let head, var remainder) = progress else { Issue.record("split \(split)"); continue }
            if first != .needMoreBytes { remainder += stream[split...] }
            #expect(head + remainder == stream)
            #expect(head.count == Self.request.utf8.count)
        }
    }

    @Test("The head size limit (8 KiB) is enforced without waiting for more")
    func readerLimit() throws {
        var reader = WebSocketHandshakeReader()
        let filler = Array("X-Filler: ".utf8) + [UInt8](repeating: 0x61, count: 8200) + Array("\r\n".utf8)
        #expect(try reader.append(Array("GET / HTTP/1.1\r\n".utf8)) == .needMoreBytes)
        do {
            _ = try reader.append(filler)
            Issue.record("no limit")
        } catch {
            #expect(error.kind == .headTooLarge)
            #expect(error.httpStatus == 431)
        }
        // A head ending exactly at the limit is fine; one byte more is not.
        let exact = Array("GET / HTTP/1.1\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: 100) + Array("\r\n\r\n".utf8)
        var small = WebSocketHandshakeReader(maxHeadSize: exact.count)
        #expect(try small.append(exact) == .complete(head: exact, remainder: []))
        var smaller = WebSocketHandshakeReader(maxHeadSize: exact.count - 1)
        #expect(throws: WebSocketError.self) { try smaller.append(exact) }
    }

    // MARK: Server side

    @Test("§ 4.2.1: header names are case-insensitive; Upgrade and Connection are token lists")
    func caseInsensitive() throws {
        let text = "GET /socket?token=abc&x=1 HTTP/1.1\r\nhost: example.org:8443\r\nUPGRADE: WebSocket\r\n"
            + "connection: keep-alive, Upgrade\r\nsec-websocket-key: AQIDBAUGBwgJCgsMDQ4PEA==\r\nSEC-WEBSOCKET-VERSION: 13\r\n"
            + "Sec-WebSocket-Protocol: parley.v1\r\nsec-websocket-protocol: parley.v2 , x\r\n"
            + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, x-foo; a=\"1,2\"\r\n\r\n"
        let request = try WebSocketUpgradeRequest.parse(Array(text.utf8))
        #expect(request.path == "/socket")
        #expect(request.query == "token=abc&x=1")
        #expect(request.host == "example.org:8443")
        #expect(request.key == "AQIDBAUGBwgJCgsMDQ4PEA==")
        #expect(request.subprotocols == ["parley.v1", "parley.v2", "x"])
        #expect(request.extensions == ["permessage-deflate; client_max_window_bits", "x-foo; a=\"1,2\""])
        #expect(request.origin == nil)
        #expect(request.headers["SEC-WEBSOCKET-PROTOCOL"] == ["parley.v1", "parley.v2 , x"])
        #expect(request.serialized() == Array(text.utf8))
        // The answer accepts no extension and names the chosen subprotocol.
        let response = try WebSocketUpgradeResponse.accepting(request, subprotocol: "parley.v2")
        #expect(response.headers.first("Sec-WebSocket-Extensions") == nil)
        #expect(response.subprotocol == "parley.v2")
        #expect(throws: WebSocketError.self) { try WebSocketUpgradeResponse.accepting(request, subprotocol: "other") }
    }

    @Test("§ 4.2.1: each missing or wrong requirement is refused with the right status",
          arguments: [
            ("GET", "POST /chat HTTP/1.1", "methodNotAllowed", 405),
            ("GET", "GET /chat HTTP/1.0", "unsupportedHTTPVersion", 505),
            ("GET", "GET /chat HTTP/2.0", "unsupportedHTTPVersion", 505),
            ("GET", "GET chat HTTP/1.1", "malformedHTTP", 400),
            ("GET", "GET  /chat HTTP/1.1", "malformedHTTP", 400),
            ("GET", "GET /chat", "malformedHTTP", 400),
            ("Host", nil, "missingHeader", 400),
            ("Upgrade", nil, "missingHeader", 400),
            ("Upgrade", "Upgrade: h2c", "invalidHeader", 400),
            ("Connection", nil, "missingHeader", 400),
            ("Connection", "Connection: keep-alive", "invalidHeader", 400),
            ("Sec-WebSocket-Version", nil, "unsupportedVersion", 426),
            ("Sec-WebSocket-Version", "Sec-WebSocket-Version: 8", "unsupportedVersion", 426),
            ("Sec-WebSocket-Version", "Sec-WebSocket-Version: 13, 8", "unsupportedVersion", 426),
            ("Sec-WebSocket-Key", nil, "missingHeader", 400),
            ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ", "invalidKey", 400),
            ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25j", "invalidKey", 400),
            ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==dGhl", "invalidKey", 400),
            ("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZR==", "invalidKey", 400),
            ("Sec-WebSocket-Protocol", "Sec-WebSocket-Protocol: chat, sup\"er", "invalidHeader", 400),
            ("Origin", "Origin : http://example.com", "malformedHTTP", 400),
            ("Origin", " folded", "malformedHTTP", 400),
            ("Origin", "Origin http://example.com", "malformedHTTP", 400),
            ("Origin", "Origin: a\u{7f}b", "malformedHTTP", 400),
          ] as [(String, String?, String, Int)])
    func refusals(line: String, replacement: String?, kind: String, status: Int) {
        let error = requestError(requestBytes(replacing: line, with: replacement))
        #expect(error?.kind.description == kind, "\(String(describing: error))")
        #expect(error?.httpStatus == status)
    }

    @Test("A server validates the request its HTTP parser read: the same value and verdicts as parsing the head")
    func validatingAParsedRequest() throws {
        func httpRequest(_ bytes: [UInt8]) throws -> HTTPRequest {
            var parser = HTTPRequestParser()
            parser.append(bytes)
            return try #require(try parser.next())
        }
        let bytes = requestBytes()
        let validated = try WebSocketUpgradeRequest(validating: try httpRequest(bytes))
        #expect(validated == (try WebSocketUpgradeRequest.parse(bytes)))
        #expect(validated.subprotocols == ["chat", "superchat"] && validated.origin == "http://example.com")
        let cases: [(String, String?, Int)] = [
            ("GET", "POST /chat HTTP/1.1", 405), ("GET", "GET /chat HTTP/1.0", 505), ("GET", "GET chat HTTP/1.1", 400),
            ("Sec-WebSocket-Version", "Sec-WebSocket-Version: 8", 426), ("Upgrade", nil, 400),
            ("Sec-WebSocket-Key", "Sec-WebSocket-Key: short", 400),
        ]
        for (line, replacement, status) in cases {
            let bytes = requestBytes(replacing: line, with: replacement)
            var fromRequest: WebSocketError?
            do { _ = try WebSocketUpgradeRequest(validating: try httpRequest(bytes)) } catch let error as WebSocketError { fromRequest = error }
            #expect(fromRequest?.httpStatus == status, "\(line): \(String(describing: fromRequest))")
            #expect(fromRequest == requestError(bytes))
        }
    }

    @Test("A head parsed as bytes: leading empty lines are skipped as HTTP allows; a head announcing a body is refused")
    func headShapes() throws {
        let bytes = requestBytes()
        #expect(try WebSocketUpgradeRequest.parse(Array("\r\n".utf8) + bytes) == (try WebSocketUpgradeRequest.parse(bytes)))
        let error = requestError(requestBytes(adding: ["Content-Length: 3"]))
        #expect(error?.kind == .malformedHTTP)
        #expect(error?.detail.contains("body") == true)
        #expect(requestError(requestBytes(adding: ["Content-Length: 0"])) == nil)
    }

    @Test("Duplicate Host or Sec-WebSocket-Key headers are refused")
    func duplicates() {
        #expect(requestError(requestBytes(adding: ["Host: other.example"]))?.kind == .invalidHeader)
        #expect(requestError(requestBytes(adding: ["Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA=="]))?.kind == .invalidKey)
    }

    @Test("Bare LF, bare CR and invalid UTF-8 in a head are refused with their line")
    func lineEndings() {
        let bareLF = Array("GET / HTTP/1.1\nHost: a\r\n\r\n".utf8)
        #expect(requestError(bareLF)?.kind == .malformedHTTP)
        let bareCR = Array("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n".utf8)
        let error = requestError(bareCR)
        #expect(error?.kind == .malformedHTTP)
        #expect(error?.line == 2)
        var badUTF8 = requestBytes(adding: ["X-Name: caf"])
        badUTF8.insert(0xe9, at: badUTF8.count - 4)
        #expect(requestError(badUTF8)?.kind == .malformedHTTP)
        #expect(requestError(Array("\r\n\r\n".utf8))?.kind == .malformedHTTP)
    }

    @Test("More than 100 header fields are refused with 431")
    func tooManyFields() {
        let error = requestError(requestBytes(adding: (0..<100).map { "X-\($0): y" }))
        #expect(error?.kind == .headTooLarge)
        #expect(error?.httpStatus == 431)
    }

    @Test("§ 4.4: a version mismatch gets 426 naming version 13; other errors get their status")
    func rejectionResponses() throws {
        let error = try #require(requestError(requestBytes(replacing: "Sec-WebSocket-Version", with: "Sec-WebSocket-Version: 8")))
        let response = WebSocketUpgradeResponse.rejecting(error)
        let expected = "HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\nConnection: close\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 30\r\n\r\nunsupported WebSocket version\n"
        #expect(String(decoding: response.serialized(), as: UTF8.self) == expected)
        let methodError = try #require(requestError(requestBytes(replacing: "GET", with: "PUT /chat HTTP/1.1")))
        let methodResponse = WebSocketUpgradeResponse.rejecting(methodError)
        #expect(methodResponse.status == 405)
        #expect(methodResponse.headers.first("allow") == "GET")
        let forbidden = try WebSocketUpgradeResponse.rejecting(status: 403, message: "bad token")
        #expect(forbidden.serialized().starts(with: Array("HTTP/1.1 403 Forbidden\r\n".utf8)))
        #expect(throws: WebSocketError.self) { try WebSocketUpgradeResponse.rejecting(status: 403, message: "x", additionalHeaders: [("X", "a\r\nSet-Cookie: evil")]) }
    }

    @Test("Every truncation of the sample request throws a typed error")
    func requestTruncations() {
        let bytes = Array(Self.request.utf8)
        for cut in 0..<bytes.count {
            let error = requestError(Array(bytes[..<cut]))
            #expect(error?.kind == .truncated || error?.kind == .malformedHTTP, "cut \(cut)")
        }
        #expect(requestError(bytes + [0x81])?.kind == .trailingBytes)
    }

    // MARK: Client side

    private func clientRequest(subprotocols: [String] = ["chat"]) throws -> WebSocketUpgradeRequest {
        let key = try #require(WebSocketKey(nonce: Array("the sample nonce".utf8)))
        return try WebSocketUpgradeRequest(target: "/chat", host: "server.example.com", key: key, subprotocols: subprotocols)
    }

    private func validation(_ text: String, _ request: WebSocketUpgradeRequest) -> Result<String?, WebSocketError> {
        do {
            let response = try WebSocketUpgradeResponse.parse(Array(text.utf8))
            return .success(try response.validate(for: request))
        } catch {
            return .failure(error)
        }
    }

    @Test("§ 4.1: the client checks status, Upgrade, Connection, accept value, extensions and subprotocol")
    func clientValidation() throws {
        let request = try clientRequest()
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        #expect(try validation(good, request).get() == nil)
        func kind(_ text: String) -> String? {
            if case .failure(let error) = validation(text, request) { return error.kind.description }
            return nil
        }
        #expect(kind(good.replacingOccurrences("101 Switching Protocols", "403 Forbidden")) == "upgradeRejected")
        #expect(kind(good.replacingOccurrences("Upgrade: websocket\r\n", "")) == "missingHeader")
        #expect(kind(good.replacingOccurrences("Upgrade: websocket", "Upgrade: h2c")) == "invalidHeader")
        #expect(kind(good.replacingOccurrences("Connection: Upgrade", "Connection: close")) == "invalidHeader")
        #expect(kind(good.replacingOccurrences("xOo=", "xOp=")) == "acceptMismatch")
        #expect(kind(good.replacingOccurrences("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n", "")) == "missingHeader")
        #expect(kind(good.replacingOccurrences("\r\n\r\n", "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n")) == "unexpectedExtension")
        #expect(kind(good.replacingOccurrences("\r\n\r\n", "\r\nSec-WebSocket-Protocol: superchat\r\n\r\n")) == "unexpectedSubprotocol")
        #expect(kind(good.replacingOccurrences("\r\n\r\n", "\r\nSec-WebSocket-Protocol: chat, chat\r\n\r\n")) == "unexpectedSubprotocol")
        #expect(try validation(good.replacingOccurrences("\r\n\r\n", "\r\nSec-WebSocket-Protocol: chat\r\n\r\n"), request).get() == "chat")
        #expect(kind(good.replacingOccurrences("HTTP/1.1 101", "HTTP/1.0 101")) == "unsupportedHTTPVersion")
        #expect(kind(good.replacingOccurrences("HTTP/1.1 101", "HTTP/1.1 1x1")) == "malformedHTTP")
        #expect(kind("HTTP/1.1 101\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n") == nil)
    }

    @Test("A server's 101 and a client's request round-trip through parse and serialize")
    func roundTrips() throws {
        let request = try clientRequest(subprotocols: ["a", "b"])
        let parsed = try WebSocketUpgradeRequest.parse(request.serialized())
        #expect(parsed == request)
        let response = try WebSocketUpgradeResponse.accepting(parsed, subprotocol: "b", additionalHeaders: [("Server", "parleyd")])
        let reparsed = try WebSocketUpgradeResponse.parse(response.serialized())
        #expect(reparsed == response)
        #expect(try reparsed.validate(for: request) == "b")
    }

    @Test("Builders refuse header injection, bad targets and wrong key sizes")
    func builderChecks() throws {
        let key = try #require(WebSocketKey(nonce: [UInt8](repeating: 1, count: 16)))
        #expect(WebSocketKey(nonce: [UInt8](repeating: 1, count: 15)) == nil)
        #expect(throws: WebSocketError.self) { try WebSocketUpgradeRequest(target: "/a b", host: "h", key: key) }
        #expect(throws: WebSocketError.self) { try WebSocketUpgradeRequest(target: "no-slash", host: "h", key: key) }
        #expect(throws: WebSocketError.self) { try WebSocketUpgradeRequest(target: "/", host: "h\r\nX: y", key: key) }
        #expect(throws: WebSocketError.self) { try WebSocketUpgradeRequest(target: "/", host: "h", key: key, subprotocols: ["a b"]) }
        #expect(throws: WebSocketError.self) {
            try WebSocketUpgradeRequest(target: "/", host: "h", key: key, additionalHeaders: [("Authorization", "Bearer x\n")])
        }
        let request = try WebSocketUpgradeRequest(target: "/", host: "h", key: key, additionalHeaders: [("Authorization", "Bearer x")])
        #expect(request.headers.first("authorization") == "Bearer x")
    }

    @Test("Random bytes and mutated requests never trap")
    func hostile() throws {
        var generator = SeededGenerator(seed: 3)
        let base = Array(Self.request.utf8)
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = generator.bytes(Int.random(in: 0...64, using: &generator)) + Array("\r\n\r\n".utf8)
            } else {
                bytes = base
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            if let request = try? WebSocketUpgradeRequest.parse(bytes) {
                #expect(try WebSocketUpgradeRequest.parse(request.serialized()) == request)
            }
            if let response = try? WebSocketUpgradeResponse.parse(bytes) {
                #expect(try WebSocketUpgradeResponse.parse(response.serialized()) == response)
            }
            var reader = WebSocketHandshakeReader(maxHeadSize: 64)
            _ = try? reader.append(bytes)
        }
    }
}

extension String {
    /// Plain substring replacement without Foundation.
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    /// Splits on a separator string without Foundation.
    func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}
