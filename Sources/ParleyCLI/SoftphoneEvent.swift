import ParleySDK

/// Receive statistics of a call's media, as shown in the live line and the summary.
struct SoftphoneStatistics: Equatable {
    var packetsSent = 0
    var packetsReceived = 0
    var packetsLost = 0
    /// Interarrival jitter (RFC 3550) in milliseconds; nil before any packet arrived.
    var jitterMs: Double?
    /// Round-trip time from RTCP reports in milliseconds; nil before the first report.
    var roundTripMs: Double?
    /// What playout did with the received audio (jitter buffer and concealment counters).
    var playout = Playout()
    /// When the first frame was taken from `--play`'s source and the first received frame
    /// was played (a recording's first sample), Unix milliseconds; nil before.
    var audioCaptureStartedMs: Double?
    var audioPlayoutStartedMs: Double?

    /// The device's playout counters, in 20 ms frames (`ParleyCallStatistics`).
    struct Playout: Equatable {
        var framesPlayed = 0
        var framesFECRecovered = 0
        var framesConcealed = 0
        var framesComfortNoise = 0
        var framesSilent = 0
        var framesStretched = 0
        var framesShrunk = 0
        var packetsLate = 0
        var targetDelayMs = 0.0
        var currentDelayMs = 0.0
    }

    /// Lost packets as a share of those expected (received + lost), in percent.
    var lossPercent: Double {
        let expected = packetsReceived + packetsLost
        return expected > 0 ? 100 * Double(packetsLost) / Double(expected) : 0
    }
}

/// Something the softphone reports: one line of output each.
enum SoftphoneEvent: Equatable {
    case connecting(server: String, userID: String)
    case signedIn(userID: String)
    case listening(answerPolicy: SoftphoneOptions.AnswerPolicy)
    /// `kind`: what `callee` is (a user id, a phone number, a SIP address).
    case calling(callee: String, headers: [String: String], kind: ParleyCallRemoteKind = .user)
    case incoming(caller: String, headers: [String: String], displayName: String? = nil)
    case progressing
    case ringing
    case answered
    case established
    /// The far side's custom SIP headers of its ringing or answer response, all so far.
    case responseHeaders([String: String])
    /// DTMF digits the far side sent.
    case dtmfReceived(digits: String)
    /// In a conference room: the users talking now, loudest first (empty: nobody).
    case talking(userIDs: [String])
    /// This side put the call on hold, or resumed it (the server accepted).
    case held
    case resumed
    /// The other party put the call on hold, or resumed it.
    case remoteHeld
    case remoteResumed
    /// This side acts: answering, declining or hanging up, and why.
    case answering
    case declining
    case hangingUp(reason: String)
    case ended(cause: ParleyCallEndCause, errorCode: String?, errorMessage: String?)
    /// The live line: time since establishment and the statistics so far.
    case statistics(elapsed: Double, SoftphoneStatistics)
    /// `--push-token` is registered with the server (or was already, unchanged).
    case pushRegistered(pushType: String, alreadyRegistered: Bool)
    /// `--relay-push`: reported to the system and relayed to the server.
    case pushRelayed(caller: String)
    /// `--relay-push`: the push is genuine but expired, a missed call.
    case pushExpired(caller: String)
}

/// What a call's summary line says.
struct SoftphoneCallSummary: Equatable {
    var callID: String
    var remoteUserID: String
    var outgoing: Bool
    var cause: ParleyCallEndCause
    var errorCode: String?
    var errorMessage: String?
    var wasEstablished: Bool
    /// Seconds from establishment to the end (0 if never established).
    var duration: Double
    var statistics: SoftphoneStatistics
    var exitCode: SoftphoneExitCode
}
