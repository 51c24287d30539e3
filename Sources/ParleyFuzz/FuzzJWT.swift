import ParleyWireCore
import ParleyAuth

private let fuzzApplication = try! ApplicationCredentials(
    key: "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41", secret: ApplicationSecret(base64: "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=")
)

/// Feeds the input to the user token verifier, the JWT parser, both Base64 decoders and
/// the Basic header parser. Invariants (a violation is a real bug):
/// - Base64 decoding is canonical: whatever decodes re-encodes to the same text;
/// - a parsed JWT is its own signing input, a dot and its re-encoded signature;
/// - claims that read as a user token can be minted again, and that token verifies to
///   the same claims;
/// - a token that verifies can be verified once more only as a replay.
func fuzzJWT(_ input: UnsafeRawBufferPointer) {
    let text = String(decoding: input, as: UTF8.self)
    if let bytes = try? Base64.decodeURL(text), Base64.encodeURL(bytes) != text {
        fatalError("base64url decoding is not canonical for \(text.debugDescription)")
    }
    if let bytes = try? Base64.decode(text), Base64.encode(bytes) != text {
        fatalError("Base64 decoding is not canonical for \(text.debugDescription)")
    }
    _ = try? BasicCredentials.parse(authorization: text)

    var nonces = NonceReplayCache()
    if let verified = try? TokenVerifier().verify(text, for: fuzzApplication, now: 1_764_421_230, nonces: &nonces) {
        do {
            _ = try TokenVerifier().verify(text, for: fuzzApplication, now: 1_764_421_230, nonces: &nonces)
            fatalError("a verified token was accepted twice")
        } catch {
            guard error.kind == .replayedNonce else { fatalError("second use gave \(error), not a replay") }
        }
        _ = verified
    }

    guard let token = try? JSONWebToken.parse(text) else { return }
    let rebuilt = String(decoding: token.signingInput, as: UTF8.self) + "." + Base64.encodeURL(token.signature)
    guard rebuilt == text else { fatalError("parsed token does not rebuild to its input") }
    guard let claims = try? UserToken(token) else { return }
    let lifetime = claims.expiresAt - claims.issuedAt
    guard lifetime <= 86_400 else { return }
    let minted: String
    do {
        minted = try UserToken.mint(
            applicationKey: claims.applicationKey, secret: fuzzApplication.secret.base64, userID: claims.userID,
            issuedAt: claims.issuedAt, lifetime: lifetime, nonce: claims.nonce, issuerForm: claims.issuerForm
        )
    } catch {
        fatalError("claims that parsed cannot be minted: \(error)")
    }
    do {
        let application = try ApplicationCredentials(key: claims.applicationKey, secret: fuzzApplication.secret)
        let again = try TokenVerifier().verifyIgnoringReplay(minted, for: application, now: claims.issuedAt)
        guard again.userID == claims.userID, again.nonce == claims.nonce, again.issuer == claims.issuer,
              again.subject == claims.subject, again.issuedAt == claims.issuedAt, again.expiresAt == claims.expiresAt else {
            fatalError("minted token reads back different claims")
        }
    } catch {
        fatalError("a freshly minted token does not verify: \(error)")
    }
}
