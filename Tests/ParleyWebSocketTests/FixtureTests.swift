import Foundation
import Testing
import ParleyWireCore
@testable import ParleyWebSocket

/// The hex fixtures in Tests/Fixtures/ws, which the CLI tests feed to `parley inspect ws`,
/// decode to what their README says.
@Suite("Fixtures") struct FixtureTests {
    private func fixture(_ name: String) throws -> [UInt8] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ws")
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        return try Hex.decode(text)
    }

    private func inspectError(_ name: String) throws -> WebSocketError? {
        do { _ = try WebSocketInspection.inspect(try fixture(name)); return nil } catch let error as WebSocketError { return error }
    }

    @Test("Valid fixtures decode as documented")
    func valid() throws {
        #expect(try WebSocketInspection.inspect(fixture("text-hello-unmasked.hex")).frames == [.text("Hello")])
        #expect(try WebSocketInspection.inspect(fixture("text-hello-masked.hex")).frames == [.text("Hello", maskingKey: rfcKey)])
        #expect(try WebSocketInspection.inspect(fixture("fragmented-hello.hex")).frames
                == [WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)), WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8))])
        #expect(try WebSocketInspection.inspect(fixture("ping-hello.hex")).frames == [.ping(Array("Hello".utf8))])
        #expect(try WebSocketInspection.inspect(fixture("pong-hello-masked.hex")).frames == [.pong(Array("Hello".utf8), maskingKey: rfcKey)])
        #expect(try WebSocketInspection.inspect(fixture("binary-256.hex")).frames == [.binary((0..<256).map { UInt8($0) })])
        #expect(try WebSocketInspection.inspect(fixture("close-1000-masked.hex")).frames
                == [.close(WebSocketClose(code: .normalClosure, reason: "ok"), maskingKey: rfcKey)])
        let request = try WebSocketInspection.inspect(fixture("handshake-request.hex"))
        #expect(request.request?.subprotocols == ["chat", "superchat"])
        #expect(request.response == nil)
        #expect(request.frames == [])
        let response = try WebSocketInspection.inspect(fixture("handshake-response-and-frame.hex"))
        #expect(response.response?.accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(response.frames == [.text("Hello")])
        let close = try WebSocketInspection.inspect(fixture("close-invalid-code.hex"))
        #expect(close.frames.count == 1)
        #expect(describe(run(try fixture("close-invalid-code.hex"), role: .client)) == ["fail:1002:invalidCloseCode"])
    }

    @Test("Invalid fixtures fail as documented")
    func invalid() throws {
        #expect(try inspectError("invalid-reserved-opcode.hex").map { [$0.kind.description, "\($0.offset ?? -1)"] } == ["reservedOpcode", "0"])
        let truncated = try inspectError("invalid-truncated.hex")
        #expect(truncated?.kind == .truncated)
        #expect(truncated?.offset == 2)
        #expect(truncated?.description == "truncated input at offset 2: payload needs 5 bytes, 2 left")
        #expect(try inspectError("invalid-nonminimal-length.hex").map { [$0.kind.description, "\($0.offset ?? -1)"] } == ["nonMinimalLength", "2"])
        let version = try inspectError("invalid-handshake-version.hex")
        #expect(version?.kind == .unsupportedVersion)
        #expect(version?.line == 8)
        #expect(version?.httpStatus == 426)
    }

    @Test("Inspection: frame offsets after a head count from the start of the input")
    func offsetsAfterHead() throws {
        let head = try fixture("handshake-response-and-frame.hex").dropLast(7)
        do {
            _ = try WebSocketInspection.inspect(Array(head) + [0x83, 0x00])
            Issue.record("reserved opcode accepted")
        } catch {
            #expect(error.kind == .reservedOpcode)
            #expect(error.offset == head.count)
        }
        #expect(throws: WebSocketError.self) { try WebSocketInspection.inspect(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)) }
        #expect(try WebSocketInspection.inspect([]) == WebSocketInspection.inspect([]))
    }
}
