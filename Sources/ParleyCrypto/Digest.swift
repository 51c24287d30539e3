internal import COpenSSL

/// A message digest algorithm carried out by OpenSSL's EVP interface.
public enum DigestAlgorithm: Sendable, Hashable {
    /// MD5: broken for collisions, kept only because SIP digest authentication (RFC 3261,
    /// RFC 8760) still defaults to it and trunks still ask for it.
    case md5
    case sha1
    case sha256
    /// SHA-512/256 (FIPS 180-4 §5.3.6): SHA-512 with its own initial values, truncated to
    /// 256 bits; RFC 8760's "SHA-512-256" digest algorithm.
    case sha512_256

    /// Output length in bytes.
    public var byteCount: Int {
        switch self {
        case .md5: return 16
        case .sha1: return 20
        case .sha256, .sha512_256: return 32
        }
    }

    var evpMD: OpaquePointer? {
        switch self {
        case .md5: return EVP_md5()
        case .sha1: return EVP_sha1()
        case .sha256: return EVP_sha256()
        case .sha512_256: return EVP_sha512_256()
        }
    }
}

/// One-shot hashing and HMAC through OpenSSL.
///
/// Both functions take any contiguous bytes and return a fresh `[UInt8]`; they are
/// thread-safe because OpenSSL's one-shot EVP calls keep no shared state.
public enum Digest {
    /// Hashes `data` with `algorithm`.
    public static func hash(_ algorithm: DigestAlgorithm, _ data: some Sequence<UInt8>) throws(CryptoError) -> [UInt8] {
        try withContiguous(data) { input throws(CryptoError) in try hash(algorithm, raw: input) }
    }

    /// Hashes the bytes at `data` with `algorithm`.
    public static func hash(_ algorithm: DigestAlgorithm, raw data: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outLength: UInt32 = 0
        let input = data
        let ok = out.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &outLength, algorithm.evpMD, nil)
        }
        guard ok == 1 else { throw CryptoError.openSSL("EVP_Digest") }
        return Array(out.prefix(Int(outLength)))
    }

    /// Computes HMAC(`key`, `data`) with `algorithm`.
    public static func hmac(
        _ algorithm: DigestAlgorithm, key: some Sequence<UInt8>, _ data: some Sequence<UInt8>
    ) throws(CryptoError) -> [UInt8] {
        try withContiguous(key) { keyBytes throws(CryptoError) in
            try withContiguous(data) { input throws(CryptoError) in try hmac(algorithm, rawKey: keyBytes, raw: input) }
        }
    }

    /// Computes HMAC(`key`, `data`) with `algorithm` over raw buffers.
    public static func hmac(
        _ algorithm: DigestAlgorithm, rawKey keyBytes: UnsafeRawBufferPointer, raw input: UnsafeRawBufferPointer
    ) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var outLength: UInt32 = 0
        let result = out.withUnsafeMutableBufferPointer { output in
                    // HMAC() treats a nil key pointer as "no key"; give it a valid
                    // pointer even for an empty key so an empty key is still a key.
                    var zero: UInt8 = 0
                    return withUnsafePointer(to: &zero) { zeroPointer in
                        HMAC(algorithm.evpMD,
                             keyBytes.baseAddress ?? UnsafeRawPointer(zeroPointer), Int32(keyBytes.count),
                             input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                             output.baseAddress, &outLength)
                    }
        }
        guard result != nil else { throw CryptoError.openSSL("HMAC") }
        return Array(out.prefix(Int(outLength)))
    }

    private static func withContiguous<R>(
        _ bytes: some Sequence<UInt8>, _ body: (UnsafeRawBufferPointer) throws(CryptoError) -> R
    ) throws(CryptoError) -> R {
        let direct: Result<R, CryptoError>? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(CryptoError) { return .success(try body(UnsafeRawBufferPointer(buffer))) } catch { return .failure(error) }
        }
        if let direct { return try direct.get() }
        let copy = Array(bytes)
        let result: Result<R, CryptoError> = copy.withUnsafeBytes { buffer in
            do throws(CryptoError) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Compares two byte sequences in time that depends only on their length.
    public static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        guard ok == 1 else { throw CryptoError.openSSL("RAND_bytes") }
        return out
    }
}
