import Testing
import ParleyTestSupport
@testable import ParleyHTTP

/// Feeds `text` in one piece and collects every request; rethrows the parser's error.
func parseAll(_ text: String, limits: HTTPRequestParser.Limits = .init()) throws(HTTPError) -> [HTTPRequest] {
    var parser = HTTPRequestParser(limits: limits)
    parser.append(Array(text.utf8))
    var requests: [HTTPRequest] = []
    while let request = try parser.next() { requests.append(request) }
    return requests
}

func expectStatus(_ status: Int, _ text: String, limits: HTTPRequestParser.Limits = .init(),
                  sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let requests = try parseAll(text, limits: limits)
        Issue.record("expected \(status), parsed \(requests.count) requests", sourceLocation: sourceLocation)
    } catch {
        #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        #expect(error.offset != nil, sourceLocation: sourceLocation)
    }
}

@Suite("HTTP/1.1 request parser")
struct RequestParserTests {
    @Test("RFC 9112 §3: request line, headers, no body")
    func simpleGet() throws {
        let requests = try parseAll("GET /v1/calls?user=alice HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
        let request = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(request.method == "GET")
        #expect(request.path == "/v1/calls")
        #expect(request.query == "user=alice")
        #expect(request.version == .http11)
        #expect(request.headers.first("host") == "example.com")
        #expect(request.body.isEmpty)
        #expect(request.keepAlive)
        #expect(!request.isUpgrade)
    }

    @Test("RFC 9112 §6.2: Content-Length body")
    func contentLengthBody() throws {
        let requests = try parseAll("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
        #expect(requests.first?.body == Array("hello".utf8))
    }

    @Test("RFC 9112 §7.1: chunked body with extensions and trailers")
    func chunkedBody() throws {
        let text = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nChecksum: abc\r\n\r\n"
        let request = try #require(try parseAll(text).first)
        #expect(request.body == Array("hello world".utf8))
        #expect(request.isChunked)
        #expect(request.trailers.first("checksum") == "abc")
    }

    @Test("RFC 9112 §9.3: keep-alive defaults per version")
    func keepAliveSemantics() throws {
        #expect(try parseAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")[0].keepAlive == false)
        #expect(try parseAll("GET / HTTP/1.0\r\n\r\n")[0].keepAlive == false)
        #expect(try parseAll("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")[0].keepAlive == true)
        #expect(try parseAll("GET / HTTP/1.1\r\nHost: a\r\n\r\n")[0].keepAlive == true)
    }

    @Test("Pipelined requests come out in order; leftovers stay buffered")
    func pipelining() throws {
        var parser = HTTPRequestParser()
        let one = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
        let two = "POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        let partial = "GET /3 HTTP/1.1\r\nHo"
        parser.append(Array((one + two + partial).utf8))
        #expect(try parser.next()?.path == "/1")
        let second = try parser.next()
        #expect(second?.path == "/2")
        #expect(second?.body == Array("abc".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.isMidRequest)
        #expect(parser.bufferedByteCount == partial.utf8.count)
        parser.append(Array("st: a\r\n\r\n".utf8))
        let third = try #require(try parser.next())
        #expect(third.path == "/3")
        #expect(third.streamOffset == (one + two).utf8.count)
        #expect(!parser.isMidRequest)
    }

    @Test("Byte-at-a-time delivery gives the same requests")
    func byteAtATime() throws {
        let text = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            + "GET /y HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for byte in text.utf8 {
            parser.append([byte])
            while let request = try parser.next() { requests.append(request) }
        }
        #expect(requests.map(\.path) == ["/x", "/y"])
        #expect(requests.map(\.body) == [Array("abc".utf8), Array("hi".utf8)])
        #expect(requests == (try parseAll(text)))
    }

    @Test("Upgrade: bytes after the head are handed over")
    func upgradeLeftovers() throws {
        var parser = HTTPRequestParser()
        let head = "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        parser.append(Array(head.utf8) + [0x81, 0x05])
        let request = try #require(try parser.next())
        #expect(request.isUpgrade)
        #expect(request.target == "/ws" && request.headers.count == 3)
        #expect(parser.takeBufferedBytes() == [0x81, 0x05])
        #expect(parser.bufferedByteCount == 0)
    }

    @Test("Leading empty lines are ignored (RFC 9112 §2.2)")
    func leadingEmptyLines() throws {
        #expect(try parseAll("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").count == 1)
    }

    // MARK: Errors and their status codes

    @Test("RFC 9112 §6.3: Content-Length with Transfer-Encoding is refused (400)")
    func smugglingBoth() {
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n")
    }

    @Test("Differing Content-Length values are refused (400); equal ones pass")
    func duplicateContentLength() throws {
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\nabcd")
        #expect(try parseAll("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc")[0].body.count == 3)
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\nabc")
    }

    @Test("RFC 9112 §5.2: obs-fold is refused (400)")
    func obsFold() {
        expectStatus(400, "GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n two\r\n\r\n")
    }

    @Test("A header or trailer value that is not UTF-8 is refused (400), at the bad byte; UTF-8 passes")
    func nonUTF8FieldValues() throws {
        let head = Array("GET / HTTP/1.1\r\nHost: a\r\nX-Name: caf".utf8)
        for bad: [UInt8] in [[0xe9], [0xc3], [0xed, 0xa0, 0x80], [0xff, 0x41]] {
            var parser = HTTPRequestParser()
            parser.append(head + bad + Array("\r\n\r\n".utf8))
            do {
                _ = try parser.next()
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.status == 400)
                #expect(error.detail.contains("UTF-8"), "\(error)")
                #expect(error.offset.map { $0 >= head.count && $0 <= head.count + bad.count } == true, "\(error)")
            }
        }
        let good = try parseAll("GET / HTTP/1.1\r\nHost: a\r\nX-Name: café ✓\r\n\r\n")
        #expect(good.first?.headers.first("x-name") == "café ✓")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: \u{7f}\r\n\r\n")
        var trailer = HTTPRequestParser()
        trailer.append(Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: caf".utf8)
                       + [0xe9] + Array("\r\n\r\n".utf8))
        #expect(throws: HTTPError.self) { try trailer.next() }
    }

    @Test("Response heads (read by the WebSocket client) use the same field-line rules")
    func responseHeads() throws {
        let head = try HTTPResponseHead.parse(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nX:  a b \r\n\r\n".utf8))
        #expect(head.version == "HTTP/1.1" && head.status == 101 && head.reason == "Switching Protocols")
        #expect(head.headers.fields.map(\.name) == ["Upgrade", "X"] && head.headers.first("x") == "a b")
        #expect(try HTTPResponseHead.parse(Array("HTTP/1.0 200\r\n\r\n".utf8)).reason == "")
        let refusals = [
            "HTTP/1.1 101 OK\r\nX : y\r\n\r\n",          // whitespace before the colon
            "HTTP/1.1 101 OK\r\n folded\r\n\r\n",         // obs-fold
            "HTTP/1.1 101 OK\r\nNo colon\r\n\r\n",
            "HTTP/1.1 101 OK\r\nX: a\u{1}b\r\n\r\n",     // control character
            "HTTP/1.1 1x1 OK\r\n\r\n", "HTTP/x.1 101 OK\r\n\r\n", "HTTP/1.1 101OK\r\n\r\n", "\r\n\r\n",
            "HTTP/1.1 101 OK\r\n\r\nbody", "HTTP/1.1 101 OK\r\n",
        ]
        for text in refusals {
            #expect(throws: HTTPError.self, "\(text.debugDescription)") { try HTTPResponseHead.parse(Array(text.utf8)) }
        }
        #expect(throws: HTTPError.self) { try HTTPResponseHead.parse(Array("HTTP/1.1 101 OK\r\nX: caf".utf8) + [0xe9] + Array("\r\n\r\n".utf8)) }
        let many = "HTTP/1.1 101 OK\r\n" + String(repeating: "X: y\r\n", count: 3) + "\r\n"
        #expect(throws: HTTPError.self) { try HTTPResponseHead.parse(Array(many.utf8), maxHeaderCount: 2) }
        #expect(try HTTPResponseHead.parse(Array(many.utf8), maxHeaderCount: 3).headers.count == 3)
    }

    @Test("RFC 9112 §5.1: whitespace before the colon is refused (400)")
    func spaceBeforeColon() {
        expectStatus(400, "GET / HTTP/1.1\r\nHost : a\r\n\r\n")
        expectStatus(400, "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n")
    }

    @Test("Transfer-Encoding variants: unknown coding 501, chunked not last 400, HTTP/1.0 400")
    func transferEncodings() {
        expectStatus(501, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    }

    @Test("Versions: HTTP/2.0 and HTTP/1.2 are 505, garbage is 400")
    func versions() {
        expectStatus(505, "GET / HTTP/2.0\r\nHost: a\r\n\r\n")
        expectStatus(505, "GET / HTTP/1.2\r\nHost: a\r\n\r\n")
        expectStatus(400, "GET / HTTP/1.11\r\nHost: a\r\n\r\n")
        expectStatus(400, "GET / FTP/1.1\r\nHost: a\r\n\r\n")
        expectStatus(400, "GET /\r\nHost: a\r\n\r\n")
    }

    @Test("RFC 9112 §3.2: HTTP/1.1 needs exactly one Host")
    func hostRequired() {
        expectStatus(400, "GET / HTTP/1.1\r\n\r\n")
        expectStatus(400, "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
    }

    @Test("Bare LF and bare CR are refused (400)")
    func bareLineEnds() {
        expectStatus(400, "GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n")
        expectStatus(400, "GET / HTTP/1.1\rHost: a\r\n\r\n")
        expectStatus(400, "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n")
    }

    @Test("Limits: long request line 414, big head 431, many fields 431, big body 413")
    func limits() {
        let limits = HTTPRequestParser.Limits(maxRequestLineLength: 100, maxHeadSize: 400, maxHeaderCount: 5, maxBodySize: 10)
        expectStatus(414, "GET /" + String(repeating: "a", count: 200) + " HTTP/1.1\r\nHost: a\r\n\r\n", limits: limits)
        expectStatus(414, "GET /" + String(repeating: "a", count: 200), limits: limits)
        expectStatus(431, "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 500), limits: limits)
        expectStatus(431, "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 500) + "\r\n\r\n", limits: limits)
        expectStatus(431, "GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X: y\r\n", count: 6) + "\r\n", limits: limits)
        expectStatus(413, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits: limits)
        expectStatus(413, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n", limits: limits)
        expectStatus(431, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
                     + String(repeating: "T: v\r\n", count: 6) + "\r\n", limits: limits)
    }

    @Test("Absurd lengths: huge Content-Length and chunk sizes fail without allocating")
    func absurdLengths() {
        expectStatus(413, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999999999\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n")
        expectStatus(413, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n")
        expectStatus(413, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n")
    }

    @Test("Chunk syntax errors: no hex, junk after size, missing CRLF after data")
    func chunkSyntax() {
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n0\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n")
        expectStatus(400, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "0", count: 2000))
    }

    @Test("A TLS ClientHello on the plain port fails at once (400)")
    func tlsOnPlainPort() {
        var parser = HTTPRequestParser()
        parser.append([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc])
        #expect(throws: HTTPError.self) { try parser.next() }
    }

    @Test("After an error the parser stays failed")
    func staysFailed() {
        var parser = HTTPRequestParser()
        parser.append(Array("GET / HTTP/9.9\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: HTTPError.self) { try parser.next() }
        parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: HTTPError.self) { try parser.next() }
    }

    // MARK: Hostile input

    @Test("Every truncation of valid requests gives nil (needs more), never a request or a trap")
    func truncations() throws {
        let samples = [
            "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n",
            "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
            "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: v\r\n\r\n",
        ]
        for sample in samples {
            let bytes = Array(sample.utf8)
            for cut in 0..<bytes.count {
                var parser = HTTPRequestParser()
                parser.append(bytes[0..<cut])
                #expect(try parser.next() == nil, "cut at \(cut) of \(sample.debugDescription)")
            }
        }
    }

    @Test("Random bytes and mutated requests end in a typed error or nil, never a trap or hang")
    func randomInput() {
        var random = SeededGenerator(seed: 0x4854_5450)
        let valid = Array("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
        for round in 0..<10_000 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = random.bytes(random.below(200))
            } else {
                input = valid
                for _ in 0..<(1 + random.below(4)) {
                    input[random.below(input.count)] = random.byte()
                }
            }
            var parser = HTTPRequestParser(limits: .init(maxHeadSize: 512, maxBodySize: 256))
            parser.append(input)
            var count = 0
            do {
                while try parser.next() != nil, count < 100 { count += 1 }
            } catch {
                #expect([400, 413, 414, 431, 501, 505].contains(error.status))
            }
        }
    }

    @Test("Split delivery gives the same requests and the same error as whole delivery")
    func splitConsistency() {
        func run(_ pieces: [ArraySlice<UInt8>]) -> ([HTTPRequest], HTTPError?) {
            var parser = HTTPRequestParser(limits: .init(maxRequestLineLength: 64, maxHeadSize: 256, maxHeaderCount: 8, maxBodySize: 64))
            var requests: [HTTPRequest] = []
            for piece in pieces {
                parser.append(piece)
                do {
                    while let request = try parser.next(), requests.count < 100 { requests.append(request) }
                } catch {
                    return (requests, error)
                }
            }
            return (requests, nil)
        }
        var random = SeededGenerator(seed: 0x5350_4c49)
        let samples = [
            "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nT: v\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /" + String(repeating: "a", count: 70) + " HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 300) + "\r\n\r\n",
        ].map { Array($0.utf8) }
        for round in 0..<3000 {
            var input = samples[round % samples.count]
            for _ in 0..<random.below(3) { input[random.below(input.count)] = random.byte() }
            let whole = run([input[...]])
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < input.count {
                let end = min(input.count, start + 1 + random.below(9))
                pieces.append(input[start..<end])
                start = end
            }
            let split = run(pieces)
            #expect(whole.0 == split.0, "round \(round)")
            #expect(whole.1 == split.1, "round \(round): \(String(describing: whole.1)) vs \(String(describing: split.1))")
        }
    }
}
