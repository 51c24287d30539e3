import ParleySignaling
import ParleyTestSupport

/// Valid messages of every type, shared by the tests, the fuzz seeds and the benchmarks'
/// shape (the bench has its own copy, being another target).
enum Samples {
    static let callID = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
    static let token = "eyJhbGciOiJIUzI1NiIsImtpZCI6ImhrZGZ2MS0yMDI1MTEyOSJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
    static let offer = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:Fr4n\r\na=ice-pwd:Hk3jL9sPq2wXz8vB7nM1cD4e\r\na=setup:actpass\r\na=rtpmap:111 opus/48000/2\r\n"
    static let answer = "v=0\r\no=parley 1 1 IN IP4 192.0.2.10\r\ns=parley\r\nt=0 0\r\na=ice-lite\r\nm=audio 40000 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 192.0.2.10\r\na=setup:passive\r\na=rtpmap:111 opus/48000/2\r\n"
    static let details = SignalingMessage.CallDetails(
        startedTime: 1_764_421_201_200, progressedTime: 1_764_421_201_240, rungTime: 1_764_421_201_420,
        answeredTime: 1_764_421_205_980, establishedTime: 1_764_421_206_110, endedTime: 1_764_421_318_400
    )

    /// At least one message of every type; several for types with optional parts.
    static let messages: [SignalingMessage] = [
        .hello(.init(
            requestID: "1", appKey: "3f6c1f2e-8d3a-4b7e-9c1d-5a2b7e9f0c41", token: token,
            deviceID: "ios-5B8E1C1A", sdk: .init(name: "parley-swift", version: "0.1.0", platform: "iOS 17.4"),
            capabilities: ["audio", "dtmf"], resumeSessionID: "s-8c1e7a"
        )),
        .hello(.init(requestID: "h", appKey: "k", token: "a.b.c", deviceID: "d", sdk: .init(name: "cli", version: "1"))),
        .ping(.init(requestID: "17")),
        .callStart(.init(
            requestID: "2", callID: callID, to: .user("bob"),
            headers: ["X-Order": "1187", "topic": "billing \u{1F4DE} \"quoted\" \\ back"], video: true, sdp: offer,
            displayName: "Alice Ödman \u{1F4DE}"
        )),
        .callStart(.init(requestID: "3", callID: callID, to: .phone("+46701234567"), sdp: offer)),
        .callStart(.init(requestID: "4", callID: callID, to: .sip("sip:bob@pbx.example.com"), headers: ["X-Account": ""], sdp: offer)),
        .callStart(.init(requestID: "5", callID: callID, to: .conference("standup-team-7"), sdp: offer)),
        .callAck(.init(requestID: "9", callID: callID)),
        .callAnswer(.init(requestID: "10", callID: callID, sdp: offer)),
        .callDecline(.init(requestID: "11", callID: callID)),
        .callHangup(.init(requestID: "12", callID: callID)),
        .callDTMF(.init(requestID: "13", callID: callID, digits: "0123456789*#ABCD")),
        .callHold(.init(requestID: "18", callID: callID, held: true)),
        .callHold(.init(requestID: "19", callID: callID, held: false)),
        .callStats(.init(requestID: "16", callID: callID, playout: .init(
            framesPlayed: 5544, framesConcealed: 41, framesFECRecovered: 12, framesComfortNoise: 2, framesSilent: 15,
            framesStretched: 3, framesShrunk: 4, packetsLate: 1, targetDelayMilliseconds: 40))),
        .iceCandidate(.init(requestID: "14", callID: callID, candidate: "candidate:2 1 udp 1686052607 203.0.113.7 51712 typ srflx", mid: "0")),
        .iceCandidate(.init(requestID: "15", callID: callID, candidate: "")),
        .pushRegister(.init(requestID: "6", pushType: .apnsVoip, token: "9f1c5e2a7b3d", environment: .sandbox, appID: "com.example.chat")),
        .pushRegister(.init(requestID: "7", pushType: .fcm, token: "fQ3x9kL2TzW:APA91b", appID: "com.example.chat")),
        .pushUnregister(.init(requestID: "8")),
        .pushUnregister(.init(requestID: "8b", token: "9f1c5e2a7b3d")),
        .pushRelay(.init(requestID: "2", payload: "eyJhbGciOiJIUzI1NiJ9.eyJjIjoxfQ.sig")),
        .helloOK(.init(
            replyTo: "1", sessionID: "s-8c1e7a", userID: "alice", serverVersion: "0.1.0", heartbeatInterval: 25_000,
            time: 1_764_421_200_000, resumed: true,
            media: .init(codecs: ["opus/48000/2"], iceServers: [
                .init(urls: ["turn:turn.example.com:3478?transport=udp", "turns:turn.example.com:5349"], username: "u", credential: "p"),
                .init(urls: ["stun:stun.example.com"]),
            ])
        )),
        .helloOK(.init(replyTo: "1", sessionID: "s", userID: "u", serverVersion: "1", heartbeatInterval: 1000, time: 0)),
        .pong(.init(replyTo: "17")),
        .result(.init(replyTo: "2")),
        .error(.init(replyTo: "2", code: .tooLarge, message: "field \"headers\" of call.start: total size 1500 bytes exceeds 1024", field: "headers")),
        .error(.init(replyTo: nil, code: .malformed, message: "malformed JSON at offset 0: unexpected end of input")),
        .error(.init(replyTo: "5", code: .unsupportedVersion, message: "version 2", field: "v", supportedVersions: [1])),
        .callIncoming(.init(callID: callID, from: .user("alice"), headers: ["X-Order": "1187"], video: false, time: 1_764_421_201_250, sdp: answer,
                            displayName: "Alice")),
        .callIncoming(.init(callID: callID, from: .phone("+46701234567"), time: 0, sdp: answer)),
        .callMedia(.init(callID: callID, sdp: answer)),
        .callProgress(.init(callID: callID, time: 1_764_421_201_240)),
        .callRinging(.init(callID: callID, time: 1_764_421_201_420)),
        .callRinging(.init(callID: callID, time: 1_764_421_201_420, headers: ["x-queue": "support", "X-Position": "3"])),
        .callAnswered(.init(callID: callID, time: 1_764_421_205_980)),
        .callAnswered(.init(callID: callID, time: 1_764_421_205_980, headers: ["x-agent": "Åsa \u{1F4DE}"])),
        .callDTMFReceived(.init(callID: callID, digits: "0123456789*#ABCD", time: 1_764_421_207_000)),
        .callTalking(.init(callID: callID, talking: [.init(callID: "0d6b9f64-1e2a-4f8c-8b37-6a5c2e1f9d08", userID: "alice"),
                                                     .init(callID: callID, userID: "bob_2")])),
        .callTalking(.init(callID: callID, talking: [])),
        .callHeld(.init(callID: callID, held: true, by: .caller, time: 1_764_421_208_000)),
        .callHeld(.init(callID: callID, held: false, by: .callee, time: 1_764_421_209_000)),
        .callEstablished(.init(callID: callID, time: SignalingLimits.maxTime)),
        .callEnded(.init(callID: callID, cause: .hungUp, details: details)),
        .callEnded(.init(
            callID: callID, cause: .error, error: .init(code: .destinationNotFound, message: "destination user not found"),
            details: .init(startedTime: 5, endedTime: 6)
        )),
    ] + SignalingMessage.EndCause.allCases.filter { $0 != .error }.map {
        .callEnded(.init(callID: callID, cause: $0, details: .init(startedTime: 1, endedTime: 2)))
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}

/// The error `body` throws, or nil if it succeeds.
func signalingError(_ body: () throws(SignalingError) -> SignalingMessage) -> SignalingError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
