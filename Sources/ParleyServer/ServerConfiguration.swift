public import ParleyCallCore
public import ParleyMediaLegCore
public import ParleyNetCore
public import ParleyPush

/// Everything `parleyd` can be told, with the defaults it runs with. Filled from flags,
/// environment variables and an optional JSON file (docs/operations.md); the server itself
/// reads nothing but this value.
public struct ServerConfiguration: Sendable, Hashable {
    /// The data directory: where parleyd's SQLite store (`parley.sqlite`) lives. The server
    /// only logs it; the store itself comes from the `CallStoreFactory` its caller passes.
    public var dataDirectory: String
    /// Signaling (WebSocket `/v1/ws`) and REST (`/v1/...`, `/healthz`, `/metrics`) on one
    /// port; several addresses for IPv4 and IPv6.
    public var listenAddresses: [SocketAddress]
    /// Optional TLS listeners (HTTPS and `wss://`), serving exactly what the plain ones
    /// serve; needs `tlsCertificateFile` and `tlsKeyFile`. Empty: no TLS.
    public var tlsListenAddresses: [SocketAddress] = []
    /// PEM certificate chain (server certificate first) for the TLS listeners.
    public var tlsCertificateFile: String?
    /// PEM private key (unencrypted) of that certificate.
    public var tlsKeyFile: String?
    /// The IP address media sockets bind to; also the host candidate in the server's SDP
    /// unless `mediaAnnouncedAddress` is set.
    public var mediaBindAddress: SocketAddress
    /// The address put in SDP when the server is behind 1:1 NAT (e.g. a cloud instance's
    /// public IP); nil announces `mediaBindAddress`.
    public var mediaAnnouncedAddress: SocketAddress?
    /// UDP ports for media legs, one port per leg. By default the 2000 ports right after
    /// the signaling port.
    public var mediaPorts: ClosedRange<UInt16>

    /// SIP over UDP and TCP on this address and port (docs/sip.md, "Transports"); nil, the
    /// default: no SIP at all. Until SIP calls exist, a stateless responder answers there.
    public var sipListenAddress: SocketAddress?
    /// SIP over TLS (RFC 3261 §26.2) on this address and port, beside `sipListenAddress`
    /// (which it needs); nil, the default: no SIP over TLS, in or out.
    public var sipTLSListenAddress: SocketAddress?
    /// PEM certificate chain (server certificate first) and unencrypted key presented on
    /// `sipTLSListenAddress`; both needed with it.
    public var sipTLSCertificateFile: String?
    public var sipTLSKeyFile: String?
    /// PEM file of the CAs that the certificates of TLS trunks and peers parleyd connects
    /// to must chain to; nil: the system's trust store.
    public var sipTLSCAFile: String?
    /// SIP requests per second one source IP address may send, sustained, and the burst
    /// above it; a request over them is answered 503 (a few per second) or dropped.
    public var sipRequestsPerSecond: Int
    public var sipRequestBurst: Int
    /// Answer every SIP request over UDP at its packet's source address and port, as if it
    /// asked with `rport` (RFC 3581), for clients behind NAT that do not ask.
    public var sipForceReturnPort: Bool
    /// Offer SRTP keyed by SDES (`RTP/SAVP` with `a=crypto`, RFC 4568) on the media legs of
    /// calls to SIP parties, rather than plain `RTP/AVP`. Off by default: a trunk or phone
    /// without SRTP refuses an `RTP/SAVP` offer (488), and most trunks have none.
    public var sipMediaOffersSDES: Bool
    /// How conference rooms mix (docs/conference.md): the room's rate, the most talkers,
    /// participants at most, hold music for a participant alone or on hold. parleyd mixes
    /// up to 8 talkers at once (the mixer's own default is 3): a room where more talk at
    /// once is noise anyway, and each talker costs one encode per tick.
    /// The rate conference rooms mix at, 16000 or 48000 (`--conference-rate`); set into
    /// `conferenceMixer` when the server is made.
    public var conferenceRoomRate = 48_000
    /// A WAV file a participant alone (or on hold) hears, looped (`--conference-hold-music`);
    /// nil: silence. Read when the server is made: one it cannot read fails the start.
    public var conferenceHoldMusicPath: String?
    /// The directory a backend's `playFiles` and menu prompts name WAV files in
    /// (`--prompt-directory`); nil: only spoken prompts (`say`, `#tts[...]`) play.
    public var promptDirectory: String?
    /// The directory a backend's `startRecording` writes its WAV files in
    /// (`--recording-directory`); nil: `startRecording` is refused and calls go on
    /// unrecorded. Checked when the server is made (it must be a writable directory) and
    /// kept as an absolute path.
    public var recordingDirectory: String?
    /// How long an empty room's mixer is kept for a participant who comes back
    /// (`--conference-linger`); zero closes it with its last participant.
    public var conferenceLinger: Duration = .zero
    /// libopus's complexity, 0-10, for the Opus encoders of conference room calls
    /// (`--conference-opus-complexity`): each talker's own and the shared mix's. 9 by
    /// default, as every other call's legs: a room encodes once per talker plus once for
    /// its listeners however many there are, so a lower setting saves little CPU, and the
    /// shared mix, heard by everyone, is the encode where quality matters most; a room
    /// then sounds as a 1:1 call does. Lower it (the conference benchmark compares with
    /// Janus at 4) to trade some quality for CPU on a server with many small rooms.
    public var conferenceOpusComplexity = 9
    public var conferenceMixer: ConferenceMixer<String>.Configuration = {
        var configuration = ConferenceMixer<String>.Configuration()
        configuration.mixer.maximumTalkers = 8
        return configuration
    }()
    /// Calls to phone numbers and SIP addresses (docs/sip.md, "Routing"): where their
    /// INVITEs go. nil, the default: such calls are refused `not_implemented`. The
    /// composition root builds the `SIPUserAgent` from it.
    public var sipGateway: SIPGatewayConfiguration?
    /// Static number routing (`--sip-number`, docs/operations.md "Callbacks and numbers"):
    /// the application each phone number belongs to and, without a backend, where a call
    /// to it goes. Empty, the default: no number is known. Inbound SIP calls will look their
    /// number up here; today the table is only read and checked at start.
    public var numberRoutes = NumberRouteTable()

    /// Calls in progress one user may have started; more `call.start`s are refused with
    /// `too_many_calls`.
    public var maxCallsPerUser: Int
    /// Calls in progress in one application, at most (beyond: `too_many_calls`).
    public var maxCallsPerApplication: Int
    /// Media legs (ports) one application's calls may hold at once; nil: three quarters of
    /// `mediaPorts`, so other applications always keep a quarter. A leg beyond it fails
    /// (`media_failed` for a caller's leg; a callee device beyond it does not ring).
    public var maxMediaLegsPerApplication: Int?

    /// How long callee devices ring before `noAnswer` / `timeout`.
    public var ringTimeout: Duration
    /// Media inactivity (no packets, no ICE consent) that ends a call as `inactive`.
    public var mediaInactivityTimeout: Duration
    /// A party's WebSocket may be away this long before its calls end as `inactive`
    /// (the session can be resumed within it).
    public var reconnectGrace: Duration
    /// Calls end as `timeout` after this long.
    public var maximumCallLength: Duration
    /// Time from the answer until both media legs must be connected.
    public var mediaSetupTimeout: Duration

    /// How often the leg statistics of established calls are written to their records
    /// (so a crash keeps recent figures); the final figures are written at the end.
    public var legStatisticsInterval: Duration

    /// A connection that sends no `hello` within this is closed with 4002.
    public var helloTimeout: Duration
    /// `hello.ok.heartbeatMs`; a connection silent for twice this is closed with 4004.
    public var heartbeatInterval: Duration
    /// Largest WebSocket message; larger closes with 1009.
    public var maxFrameSize: Int
    /// Frames per second per connection (`hello` and `ping` included), and the burst
    /// allowed above it; a frame over them is answered `rate_limited`. At twice either the
    /// edge stops reading and the connection is closed with 4005 after the replies to
    /// every frame taken before (docs/protocol.md, Limits).
    public var maxRequestsPerSecond: Int
    public var requestBurst: Int
    /// Open TCP connections at most (beyond: HTTP 503).
    public var maxConnections: Int
    /// File descriptors kept free under the process's limit (`RLIMIT_NOFILE`): connections,
    /// media legs and SIP connections are refused before they take these (the edge answers
    /// 503), so libdispatch, SQLite and libcurl always find one (`DescriptorHeadroom`;
    /// docs/operations.md, Descriptors). Process-wide once the server starts.
    public var descriptorHeadroom: Int
    /// Event loops for the HTTP/WebSocket edge (one per core by default).
    public var edgeLoopCount: Int
    /// Event loops the media legs run on, a call's legs all on one (one per core by
    /// default; clamped to the online cores).
    public var mediaLoopCount: Int
    /// At shutdown, how long to wait for the store to take the last call records (a store
    /// locked longer leaves those calls to the next start's recovery).
    public var shutdownStoreTimeout: Duration

    /// Log lines below this level are dropped.
    public var logLevel: LogLevel
    /// Create a development application when the store has none, and print its key and secret.
    public var createDevelopmentApplication: Bool

    /// Where APNs and FCM are (the real providers; tests point this at the emulator).
    public var pushEndpoints: PushEndpoints
    /// When a push answered 429/5xx is tried again (docs/push.md).
    public var pushRetryPolicy: PushRetryPolicy
    /// Bound on one HTTP/2 exchange with a provider, connect included.
    public var pushRequestTimeout: Duration
    /// A PEM file of certificates to trust for the providers instead of the system's
    /// (the emulator's self-signed certificate in tests); nil: the system's.
    public var pushCAFile: String?
    /// The OAuth token endpoint for every FCM service account instead of its `token_uri`
    /// (a test points it at the emulator); nil: each account's own.
    public var pushFCMTokenURL: String?

    /// The defaults for a server on `127.0.0.1:8080` with its store in `dataDirectory`.
    public init(dataDirectory: String, listenAddresses: [SocketAddress] = [.ipv4Loopback(port: 8080)]) {
        self.dataDirectory = dataDirectory
        self.listenAddresses = listenAddresses
        let first = listenAddresses.first ?? .ipv4Loopback(port: 8080)
        mediaBindAddress = first.withPort(0)
        mediaAnnouncedAddress = nil
        let base = first.port == 0 ? 20_000 : min(Int(first.port) + 1, 65_535 - 1999)
        mediaPorts = UInt16(base)...UInt16(base + 1999)
        sipListenAddress = nil
        sipTLSListenAddress = nil
        sipTLSCertificateFile = nil
        sipTLSKeyFile = nil
        sipTLSCAFile = nil
        sipRequestsPerSecond = 50
        sipRequestBurst = 100
        sipForceReturnPort = false
        sipMediaOffersSDES = false
        sipGateway = nil
        maxCallsPerUser = 10
        maxCallsPerApplication = 1000
        maxMediaLegsPerApplication = nil
        ringTimeout = .seconds(60)
        mediaInactivityTimeout = .seconds(30)
        reconnectGrace = .seconds(30)
        maximumCallLength = .seconds(4 * 3600)
        mediaSetupTimeout = .seconds(30)
        legStatisticsInterval = .seconds(10)
        helloTimeout = .seconds(10)
        heartbeatInterval = .seconds(20)
        maxFrameSize = 65_536
        maxRequestsPerSecond = 20
        requestBurst = 50
        maxConnections = 20_000
        descriptorHeadroom = 16
        edgeLoopCount = Int.max
        mediaLoopCount = Int.max
        shutdownStoreTimeout = .seconds(10)
        logLevel = .info
        createDevelopmentApplication = true
        pushEndpoints = .providers
        pushRetryPolicy = PushRetryPolicy()
        pushRequestTimeout = .seconds(10)
        pushCAFile = nil
        pushFCMTokenURL = nil
    }
}

/// Severity of a log line.
public enum LogLevel: String, Sendable, Hashable, CaseIterable, Comparable {
    case debug, info, warning, error

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

extension ServerConfiguration {
    /// `maxMediaLegsPerApplication`, or three quarters of the media ports (at least 2).
    public var effectiveMaxMediaLegsPerApplication: Int {
        maxMediaLegsPerApplication ?? max(2, mediaPorts.count * 3 / 4)
    }
}
