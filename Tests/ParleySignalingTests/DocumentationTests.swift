import ParleySignaling
import Testing

/// Keeps docs/protocol.md true: every ```json block in it is a frame the codec accepts,
/// and together they show every message type.
@Suite("docs/protocol.md examples")
struct DocumentationTests {
    /// The text of docs/protocol.md, found from this file's path (Tests/ParleySignalingTests/ -> repository root).
    static func protocolDocument() throws -> String {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        let path = components.joined(separator: "/") + "/docs/protocol.md"
        return try #require(readTextFile(path), "cannot read \(path)")
    }

    /// The contents of every fenced block tagged `json`.
    static func jsonBlocks(in document: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]? = nil
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil {
                if line.trimmingPrefixSpaces == "```json" { current = [] }
            } else if line.trimmingPrefixSpaces.hasPrefix("```") {
                blocks.append((current ?? []).joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test("every json block decodes, and re-encodes to an equal message")
    func everyExampleDecodes() throws {
        let blocks = Self.jsonBlocks(in: try Self.protocolDocument())
        #expect(blocks.count >= SignalingMessageType.allCases.count)
        for block in blocks {
            do {
                let message = try SignalingCodec.decode(block)
                #expect(try SignalingCodec.decode(SignalingCodec.encode(message)) == message)
            } catch {
                Issue.record("docs example does not decode: \(error)\n\(block)")
            }
        }
    }

    @Test("the examples show every message type")
    func examplesCoverEveryType() throws {
        let blocks = Self.jsonBlocks(in: try Self.protocolDocument())
        let types = Set(blocks.compactMap { try? SignalingCodec.decode($0).type })
        let missing = Set(SignalingMessageType.allCases).subtracting(types)
        #expect(missing.isEmpty, "no example for \(missing.map(\.rawValue).sorted())")
    }

    @Test("every message type has its own section")
    func everyTypeDocumented() throws {
        let document = try Self.protocolDocument()
        for type in SignalingMessageType.allCases {
            #expect(document.contains("`\(type.rawValue)`"), "docs/protocol.md does not mention \(type.rawValue)")
        }
        for cause in SignalingMessage.EndCause.allCases {
            #expect(document.contains("| `\(cause.rawValue)` |"), "end cause \(cause.rawValue) is not in the table")
        }
        for code in ["malformed", "bad_request", "unsupported_version", "unknown_type", "too_large"] {
            #expect(document.contains("| `\(code)` |"), "error code \(code) is not in the table")
        }
    }

    @Test("every truncation of every example is rejected with a typed error")
    func truncatedExamples() throws {
        for block in Self.jsonBlocks(in: try Self.protocolDocument()) {
            let bytes = Array(block.utf8)
            // One #expect per example: the macro costs more than a decode in debug builds.
            let accepted = (0..<bytes.count).filter { (try? SignalingCodec.decode(Array(bytes[0..<$0]))) != nil }
            #expect(accepted.isEmpty, "prefixes of \(accepted) bytes decoded:\n\(block)")
        }
    }
}

extension Substring {
    var trimmingPrefixSpaces: Substring { drop(while: { $0 == " " }) }
}
