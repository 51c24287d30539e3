/// The answer slot for one token request. Only the first answer counts; later ones are ignored.
public final class ParleyClientRegistration: Sendable {
    private let answer: Locked<(@Sendable (Result<String, ParleyClientError>) -> Void)?>

    init(_ answer: @escaping @Sendable (Result<String, ParleyClientError>) -> Void) {
        self.answer = Locked(answer)
    }

    /// Gives the client a user token (a compact JWT minted by the application's backend).
    public func register(withJWT jwt: String) {
        take()?(.success(jwt))
    }

    /// Says no token can be had; the client fails with `registration_failed`.
    public func registerDidFail(error: any Error) {
        take()?(.failure(ParleyClientError(code: "registration_failed", message: "no token: \(error)")))
    }

    private func take() -> (@Sendable (Result<String, ParleyClientError>) -> Void)? {
        answer.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }
}
