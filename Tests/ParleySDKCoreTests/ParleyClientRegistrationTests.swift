@_spi(ParleyEngines) @testable import ParleySDKCore
import Testing

/// The token callback handed to `clientRequiresRegistrationCredentials`.
@Suite struct ParleyClientRegistrationTests {
    @Test func registrationAnswersOnlyOnce() {
        let answers = Locked<[String]>([])
        let registration = ParleyClientRegistration { result in
            answers.withLock { $0.append((try? result.get()) ?? "fail") }
        }
        registration.register(withJWT: "a.b.c")
        registration.registerDidFail(error: ParleyClientError(code: "x", message: "y"))
        registration.register(withJWT: "d.e.f")
        #expect(answers.current == ["a.b.c"])
    }
}
