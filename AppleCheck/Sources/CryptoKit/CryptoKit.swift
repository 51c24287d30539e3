// MIRROR of Apple's CryptoKit, for type-checking and running Parley's Apple engines on
// Linux (AppleCheck/README.md): only `HMAC<SHA256>.authenticationCode(for:using:)` and
// `SymmetricKey(data:)`, implemented with the root package's OpenSSL wrapper.
// Follows https://developer.apple.com/documentation/cryptokit/hmac,
// .../symmetrickey/init(data:) and .../hashedauthenticationcode: HMAC is generic over a
// `HashFunction`; the code is a `MessageAuthenticationCode` (a `Sequence` of UInt8,
// `ContiguousBytes`, `Hashable`); all of them `Sendable`. The mirror supports SHA-256 only.
@_exported import Foundation
import ParleyCrypto

/// A hash function HMAC can use.
public protocol HashFunction {
    /// The digest's size in bytes.
    static var byteCount: Int { get }
}

/// SHA-256.
public struct SHA256: HashFunction, Sendable {
    public static var byteCount: Int { 32 }
}

/// A symmetric key.
public struct SymmetricKey: Sendable {
    let bytes: [UInt8]
    /// A key of these bytes.
    public init<D: ContiguousBytes>(data: D) {
        bytes = data.withUnsafeBytes { Array($0) }
    }
}

/// Message authentication with hash function `H`.
public struct HMAC<H: HashFunction>: Sendable {
    /// The code of `data` under `key`.
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey) -> HashedAuthenticationCode<H> {
        precondition(H.self == SHA256.self, "the CryptoKit mirror has HMAC-SHA256 only")
        // OpenSSL fails only on allocation failure or an unknown digest; neither applies.
        let code = (try? Digest.hmac(.sha256, key: key.bytes, Array(data))) ?? []
        return HashedAuthenticationCode(bytes: code)
    }
}

/// An HMAC's output.
public struct HashedAuthenticationCode<H: HashFunction>: Hashable, Sendable, Sequence, ContiguousBytes {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}
