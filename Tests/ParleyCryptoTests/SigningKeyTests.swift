import Testing
import ParleyCrypto
import ParleyWireCore

private let message = Array("parley signing vector".utf8)

@Suite struct SigningKeyTests {
    @Test func es256VerifiesASignatureMadeByAnotherImplementation() throws {
        let key = try ES256Key(privateKeyPEM: SigningVectors.es256PrivateKeyPEM)
        let signature = try Hex.decode(SigningVectors.es256SignatureHex)
        #expect(try key.verify(signature, message: message))
        #expect(try !key.verify(signature, message: message + [0]))
    }

    @Test func es256SignsInJOSEFormAndRoundTripsThroughPEM() throws {
        let key = try ES256Key.generate()
        let signature = try key.sign(message)
        #expect(signature.count == 64)
        let publicOnly = try ES256Key(publicKeyPEM: try key.publicKeyPEM())
        #expect(try publicOnly.verify(signature, message: message))
        #expect(!publicOnly.isPrivate)
        #expect(throws: CryptoError.self) { try publicOnly.sign(message) }
        let reloaded = try ES256Key(privateKeyPEM: try key.privateKeyPEM())
        #expect(try reloaded.verify(try reloaded.sign(message), message: message))
        #expect(try key.privateKeyPEM().hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    @Test func es256RefusesTamperedOrMisshapenSignatures() throws {
        let key = try ES256Key(privateKeyPEM: SigningVectors.es256PrivateKeyPEM)
        var signature = try key.sign(message)
        signature[5] ^= 0x01
        #expect(try !key.verify(signature, message: message))
        #expect(try !key.verify([UInt8](repeating: 0, count: 64), message: message))
        #expect(try !key.verify([UInt8](repeating: 0xFF, count: 64), message: message))
        #expect(try !key.verify([UInt8](), message: message))
        #expect(try !key.verify([UInt8](repeating: 1, count: 72), message: message))
    }

    @Test func es256LoadsTheTraditionalECForm() throws {
        let key = try ES256Key(privateKeyPEM: SigningVectors.ecTraditionalPEM)
        #expect(try key.verify(try Hex.decode(SigningVectors.es256SignatureHex), message: message))
    }

    @Test func keysOfTheWrongKindOrGarbageAreRefused() throws {
        #expect { try ES256Key(privateKeyPEM: SigningVectors.rs256PrivateKeyPEM) } throws: { ($0 as? CryptoError)?.kind == .invalidKey }
        #expect { try RS256Key(privateKeyPEM: SigningVectors.es256PrivateKeyPEM) } throws: { ($0 as? CryptoError)?.kind == .invalidKey }
        #expect { try ES256Key(privateKeyPEM: "") } throws: { ($0 as? CryptoError)?.kind == .invalidKey }
        #expect { try ES256Key(privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") } throws: {
            ($0 as? CryptoError)?.kind == .invalidKey
        }
        #expect { try RS256Key(publicKeyPEM: "not a key") } throws: { ($0 as? CryptoError)?.kind == .invalidKey }
        let p384 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBbBGcKrM1EZ3mHfVSh
        -----END PRIVATE KEY-----
        """
        #expect(throws: CryptoError.self) { try ES256Key(privateKeyPEM: p384) }
    }

    @Test func rs256MatchesAnotherImplementationByteForByte() throws {
        // PKCS#1 v1.5 signatures are deterministic, so ours must equal Python's exactly.
        let key = try RS256Key(privateKeyPEM: SigningVectors.rs256PrivateKeyPEM)
        let expected = try Hex.decode(SigningVectors.rs256SignatureHex)
        #expect(try key.sign(message) == expected)
        let publicOnly = try RS256Key(publicKeyPEM: try key.publicKeyPEM())
        #expect(try publicOnly.verify(expected, message: message))
        #expect(try !publicOnly.verify(expected, message: Array("other".utf8)))
        #expect(try !publicOnly.verify(Array(expected.dropLast()), message: message))
    }
}
