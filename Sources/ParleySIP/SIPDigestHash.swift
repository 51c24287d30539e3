internal import ParleyCrypto

/// The hashing under digest authentication: RFC 7616 §3.4's H() (the lowercase hex of a
/// digest), the HMAC behind the server's nonces, and hex for both. It calls ParleyCrypto's
/// raw-buffer entry points on `[UInt8]`, as ParleyAuth does, so no generic code runs per hash.
enum SIPDigestHash {
    /// OpenSSL's digest for a supported algorithm, nil for `.other`.
    static func cryptoAlgorithm(_ algorithm: SIPDigestAlgorithm) -> DigestAlgorithm? {
        switch algorithm {
        case .md5, .md5Sess: .md5
        case .sha256, .sha256Sess: .sha256
        case .sha512_256, .sha512_256Sess: .sha512_256
        case .other: nil
        }
    }

    /// H(data): the lowercase hex digest of `data`.
    static func hex(_ algorithm: DigestAlgorithm, _ data: [UInt8]) throws(SIPDigestError) -> String {
        let result: Result<[UInt8], CryptoError> = data.withUnsafeBytes { buffer in
            do throws(CryptoError) { return .success(try Digest.hash(algorithm, raw: buffer)) } catch { return .failure(error) }
        }
        do { return lowercaseHex(try result.get()) } catch { throw SIPDigestError(.cryptoFailure, "digest failed: \(error)") }
    }

    /// H of the strings joined by ":" (RFC 7616's `H(a:b:c)`), as UTF-8.
    static func hex(_ algorithm: DigestAlgorithm, joining parts: [String]) throws(SIPDigestError) -> String {
        var data: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ":")) }
            data.append(contentsOf: part.utf8)
        }
        return try hex(algorithm, data)
    }

    static func hmacSHA256(key: [UInt8], _ message: [UInt8]) throws(SIPDigestError) -> [UInt8] {
        let result: Result<[UInt8], CryptoError> = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                do throws(CryptoError) {
                    return .success(try Digest.hmac(.sha256, rawKey: keyBytes, raw: messageBytes))
                } catch {
                    return .failure(error)
                }
            }
        }
        do { return try result.get() } catch { throw SIPDigestError(.cryptoFailure, "HMAC-SHA256 failed: \(error)") }
    }

    /// True if `a` and `b` are equal, in time that depends only on their lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        Digest.constantTimeEqual(a, b)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func lowercaseHex(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of lowercase or uppercase hex text, nil if it is not hex of even length.
    static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
