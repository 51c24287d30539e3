import ParleyTestSupport
import ParleyWireCore
import Testing

@Suite struct Base64Tests {
    /// RFC 4648 §10 test vectors.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648Section10Vectors() throws {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(try Base64.decode(encoded) == Array(plain.utf8))
            let unpadded = String(encoded.prefix { $0 != "=" })
            #expect(Base64.encodeURL(Array(plain.utf8)) == unpadded)
            #expect(try Base64.decodeURL(unpadded) == Array(plain.utf8))
        }
    }

    @Test func urlAlphabetUsesDashAndUnderscore() throws {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encodeURL(bytes) == "-_-_")
        #expect(try Base64.decodeURL("-_-_") == bytes)
        #expect(try Base64.decode("+/+/") == bytes)
    }

    @Test(arguments: [
        "Zg", "Zg=", "Zm8", "Z===", "====", "Zg==Zg==", "Zm9v\n", " Zm9v", "Zm9-", "Zm9_", "Zh==", "Zm9=", "Zm=v", "Z",
        "Zm9v=", "=Zm9", "Zm9 v", "Zm9=Zm9v", "Zm-v",
    ])
    func strictStandardRefuses(_ text: String) {
        #expect(throws: Base64Error.self) { try Base64.decode(text) }
    }

    @Test(arguments: ["Zg==", "Zg=", "Zm9v+", "Zm9v/", "Z", "Zh", "Zm9", "Zm 9v", "Zm9vYmFyZ", "é"])
    func strictURLRefuses(_ text: String) {
        #expect(throws: Base64Error.self) { try Base64.decodeURL(text) }
    }

    @Test func errorsCarryTheOffset() {
        do {
            _ = try Base64.decodeURL("abc*def")
            Issue.record("decoded")
        } catch {
            #expect(error.offset == 3)
        }
        do {
            _ = try Base64.decode("Zh==")
            Issue.record("decoded non-canonical")
        } catch {
            #expect(error.offset == 1)
        }
    }

    @Test func randomRoundTrips() throws {
        var generator = SeededGenerator(seed: 4648)
        for _ in 0..<2000 {
            let bytes = generator.bytes(generator.below(70))
            #expect(try Base64.decode(Base64.encode(bytes)) == bytes)
            #expect(try Base64.decodeURL(Base64.encodeURL(bytes)) == bytes)
        }
    }

    /// Whatever decodes re-encodes to the same text: one encoding per byte string.
    @Test func randomTextDecodesOnlyCanonically() {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= ".utf8)
        var failures: [String] = []
        for _ in 0..<10_000 {
            let text = String(decoding: (0..<generator.below(12)).map { _ in alphabet[generator.below(alphabet.count)] }, as: UTF8.self)
            if let bytes = try? Base64.decode(text), Base64.encode(bytes) != text { failures.append(text) }
            if let bytes = try? Base64.decodeURL(text), Base64.encodeURL(bytes) != text { failures.append(text) }
        }
        #expect(failures.isEmpty, "not canonical: \(failures.prefix(5))")
    }
}
