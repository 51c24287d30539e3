import Foundation
import ParleyNetCore
import ParleyStore
import Testing

@testable import ParleyDaemon

/// docs/operations.md shows what `parleyd serve` prints on standard output; these tests
/// keep it byte for byte what `Serve.banner` writes.
@Suite struct DaemonBannerDocumentationTests {
    /// The fenced `text` blocks of docs/operations.md, in order.
    static func textBlocks() throws -> [String] {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        let path = components.joined(separator: "/") + "/docs/operations.md"
        let document = try String(contentsOfFile: path, encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil {
                if line == "```text" { current = [] }
            } else if line.hasPrefix("```") {
                blocks.append((current ?? []).map { $0 + "\n" }.joined())
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test func theDocumentedBannersAreWhatServePrints() throws {
        let blocks = try Self.textBlocks()
        try #require(blocks.count >= 2)
        let address = try SocketAddress(parsing: "127.0.0.1:8080")
        let application = Application(key: "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41", name: "development",
                                      secret: "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", createdTime: 0)
        let development = Serve.banner(addresses: [address], developmentApplication: application, dataDirectory: "./.parley",
                                       softphone: ".build/release/parley")
        #expect(development == blocks[0], "printed:\n\(development)\ndocumented:\n\(blocks[0])")
        let existing = Serve.banner(addresses: [address], developmentApplication: nil, dataDirectory: "./.parley")
        let listening = "parleyd listening on http://127.0.0.1:8080 (signaling ws://127.0.0.1:8080/v1/ws)\n"
        #expect(existing == listening + blocks[1], "printed:\n\(existing)\ndocumented:\n\(blocks[1])")
        let tls = Serve.banner(addresses: [address], developmentApplication: nil, dataDirectory: "./.parley",
                               tlsAddresses: [try SocketAddress(parsing: "0.0.0.0:443")])
        #expect(tls.contains("parleyd listening on https://0.0.0.0:443 (signaling wss://0.0.0.0:443/v1/ws)\n"))
    }
}
