import Foundation
import ParleyAuth
import Testing

/// docs/auth.md's Python minting example, run with python3: it reproduces docs/protocol.md's
/// worked-example token byte for byte, and so does `UserToken.mint`.
@Suite struct AuthDocumentationTests {
    static func document(_ name: String) throws -> String {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return try String(contentsOfFile: components.joined(separator: "/") + "/docs/" + name, encoding: .utf8)
    }

    /// The first fenced block tagged `language` in `document`.
    static func firstBlock(_ language: String, in document: String) -> String? {
        guard let start = document.range(of: "```\(language)\n"),
              let end = document.range(of: "\n```", range: start.upperBound..<document.endIndex) else { return nil }
        return String(document[start.upperBound..<end.lowerBound])
    }

    @Test func thePythonExampleMintsTheWorkedExampleToken() throws {
        let protocolText = try Self.document("protocol.md")
        let tokenLine = try #require(protocolText.split(separator: "\n").first { $0.hasPrefix("token        ") })
        let expected = String(tokenLine.dropFirst("token        ".count))
        let minted = try UserToken.mint(applicationKey: "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41",
                                        secret: "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=", userID: "alice",
                                        issuedAt: 1_764_421_200, lifetime: 86_400, nonce: "q3Zt8yW1")
        #expect(minted == expected)

        let example = try #require(Self.firstBlock("python", in: try Self.document("auth.md")), "no python block in docs/auth.md")
        let script = example + """

            print(user_token("3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41", "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=",
                             "alice", lifetime=86400, iat=1764421200, nonce="q3Zt8yW1"))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == expected)
    }
}
