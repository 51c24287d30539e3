/// One setting of `parleyd serve`, with its three spellings: the flag (`--ring-timeout`),
/// the environment variable (`PARLEY_RING_TIMEOUT`) and the JSON key (`ringTimeout`), all
/// derived from the flag so they cannot drift apart.
struct ConfigurationOption: Sendable, Hashable {
    /// What kind of value the option takes, which decides how each source spells it.
    enum Kind: Sendable, Hashable {
        /// A string (paths, addresses, levels); JSON string.
        case text
        /// Repeatable `HOST:PORT`: the flag may be given several times, the environment
        /// variable is comma-separated, the JSON value is a string or an array of strings.
        case list
        /// Seconds, a positive decimal number; JSON number.
        case seconds
        /// A whole number; JSON number.
        case integer
        /// `LO-HI` or one port; JSON string or number.
        case portRange
        /// A flag without value; environment `1`/`true`/`yes` or `0`/`false`/`no`; JSON boolean.
        case switchOn
    }

    /// The flag name without `--`, e.g. `ring-timeout`.
    let name: String
    let kind: Kind
    /// How the value is written in `--help`, e.g. `SECONDS`; empty for a switch.
    let valueName: String
    /// The default as shown in `--help` and docs/operations.md.
    let defaultText: String
    let help: String
    /// Whether the JSON file may set it (`config` itself may not).
    var inFile: Bool = true

    var flag: String { "--" + name }

    /// `PARLEY_` and the name in upper snake case.
    var environmentName: String {
        "PARLEY_" + name.uppercased().replacingHyphens(with: "_")
    }

    /// The name in lower camel case.
    var jsonKey: String {
        let parts = name.split(separator: "-")
        return parts.enumerated().map { index, part in
            index == 0 ? String(part) : part.prefix(1).uppercased() + part.dropFirst()
        }.joined()
    }

    /// Every option `serve` knows, in the order `--help` lists them.
    static let all: [ConfigurationOption] = {
        // The SIP gateway's options (SIPGatewaySettings) follow the other SIP ones.
        let split = (general.firstIndex { $0.name == "sip-force-rport" } ?? general.count - 1) + 1
        return Array(general[..<split]) + SIPGatewaySettings.options + NumberRouteSettings.options + general[split...]
    }()

    private static let general: [ConfigurationOption] = [
        .init(name: "config", kind: .text, valueName: "FILE", defaultText: "none",
              help: "JSON file of settings (keys as below in camelCase); flags and environment override it", inFile: false),
        .init(name: "data-dir", kind: .text, valueName: "DIR", defaultText: "./.parley",
              help: "directory of the store (parley.sqlite); created if missing"),
        .init(name: "listen", kind: .list, valueName: "HOST:PORT", defaultText: "127.0.0.1:8080",
              help: "WebSocket and REST address; repeatable (IPv6: [::1]:8080); environment: comma-separated"),
        .init(name: "tls-listen", kind: .list, valueName: "HOST:PORT", defaultText: "none",
              help: "second listener speaking TLS (https, wss), same service; repeatable; needs --tls-cert and --tls-key"),
        .init(name: "tls-cert", kind: .text, valueName: "FILE", defaultText: "none",
              help: "PEM certificate chain for --tls-listen (server certificate first)"),
        .init(name: "tls-key", kind: .text, valueName: "FILE", defaultText: "none",
              help: "PEM private key (unencrypted) for --tls-cert"),
        .init(name: "media-ports", kind: .portRange, valueName: "LO-HI", defaultText: "the 2000 ports after the first listen port",
              help: "UDP ports for media legs, one per leg (or one PORT)"),
        .init(name: "media-address", kind: .text, valueName: "IP", defaultText: "the first listen address's IP",
              help: "IP the media sockets bind to"),
        .init(name: "announce-address", kind: .text, valueName: "IP", defaultText: "the media address",
              help: "IP announced in SDP (the public IP behind 1:1 NAT)"),
        .init(name: "sip-listen", kind: .text, valueName: "HOST:PORT", defaultText: "off",
              help: "SIP over UDP and TCP on this address (IPv6: [::1]:5060); calls go out with the gateway options below"),
        .init(name: "sip-requests-per-second", kind: .integer, valueName: "N", defaultText: "50",
              help: "SIP requests per second per source IP (beyond: 503, then dropped)"),
        .init(name: "sip-request-burst", kind: .integer, valueName: "N", defaultText: "100",
              help: "SIP requests one source IP may send at once above the rate"),
        .init(name: "sip-force-rport", kind: .switchOn, valueName: "", defaultText: "off",
              help: "answer SIP over UDP at the packet's source even without rport (clients behind NAT)"),
        .init(name: "ring-timeout", kind: .seconds, valueName: "SECONDS", defaultText: "60",
              help: "how long callees ring before the call ends as noAnswer"),
        .init(name: "conference-rate", kind: .integer, valueName: "HZ", defaultText: "48000",
              help: "the rate conference rooms mix at: 16000 or 48000"),
        .init(name: "conference-opus-complexity", kind: .integer, valueName: "N", defaultText: "9",
              help: "libopus complexity of conference rooms' encoders, 0 (cheapest) to 10"),
        .init(name: "prompt-directory", kind: .text, valueName: "DIR", defaultText: "none",
              help: "the directory a backend's playFiles and menu prompts name WAV files in"),
        .init(name: "recording-directory", kind: .text, valueName: "DIR", defaultText: "none",
              help: "the directory a backend's startRecording writes WAV files in (without it, calls go unrecorded)"),
        .init(name: "conference-hold-music", kind: .text, valueName: "FILE.wav", defaultText: "silence",
              help: "what a participant alone in a room, or on hold, hears (looped)"),
        .init(name: "conference-linger", kind: .seconds, valueName: "SECONDS", defaultText: "0",
              help: "how long an empty room is kept for a participant who comes back"),
        .init(name: "media-timeout", kind: .seconds, valueName: "SECONDS", defaultText: "30",
              help: "media silence (no packets, no ICE consent) that ends a call as inactive"),
        .init(name: "media-setup-timeout", kind: .seconds, valueName: "SECONDS", defaultText: "30",
              help: "time from the answer until both media legs must be connected"),
        .init(name: "max-call-length", kind: .seconds, valueName: "SECONDS", defaultText: "14400",
              help: "calls end as timeout after this long"),
        .init(name: "reconnect-grace", kind: .seconds, valueName: "SECONDS", defaultText: "30",
              help: "how long a party's connection may be away before its calls end"),
        .init(name: "hello-timeout", kind: .seconds, valueName: "SECONDS", defaultText: "10",
              help: "a connection that sends no hello within this is closed (4002)"),
        .init(name: "heartbeat", kind: .seconds, valueName: "SECONDS", defaultText: "20",
              help: "heartbeat interval announced in hello.ok; silence for twice it closes (4004)"),
        .init(name: "max-frame-size", kind: .integer, valueName: "BYTES", defaultText: "65536",
              help: "largest WebSocket message (larger closes with 1009)"),
        .init(name: "max-requests-per-second", kind: .integer, valueName: "N", defaultText: "20",
              help: "signaling requests per second per connection"),
        .init(name: "request-burst", kind: .integer, valueName: "N", defaultText: "50",
              help: "requests allowed at once above the rate"),
        .init(name: "max-connections", kind: .integer, valueName: "N", defaultText: "20000",
              help: "open TCP connections at most (beyond: HTTP 503)"),
        .init(name: "max-calls-per-user", kind: .integer, valueName: "N", defaultText: "10",
              help: "calls in progress one user may have started (beyond: too_many_calls)"),
        .init(name: "max-calls-per-app", kind: .integer, valueName: "N", defaultText: "1000",
              help: "calls in progress in one application (beyond: too_many_calls)"),
        .init(name: "max-media-legs-per-app", kind: .integer, valueName: "N", defaultText: "3/4 of the media ports",
              help: "media legs (ports) one application's calls may hold at once"),
        .init(name: "edge-loops", kind: .integer, valueName: "N", defaultText: "one per CPU core",
              help: "event loop threads for HTTP and WebSocket"),
        .init(name: "log-level", kind: .text, valueName: "LEVEL", defaultText: "info",
              help: "debug, info, warning or error"),
        .init(name: "no-dev-app", kind: .switchOn, valueName: "", defaultText: "off",
              help: "do not create a development application on an empty store"),
        .init(name: "apns-url", kind: .text, valueName: "URL", defaultText: "https://api.push.apple.com",
              help: "APNs production base URL (tests: the emulator)"),
        .init(name: "apns-sandbox-url", kind: .text, valueName: "URL", defaultText: "https://api.sandbox.push.apple.com",
              help: "APNs development (sandbox) base URL"),
        .init(name: "fcm-url", kind: .text, valueName: "URL", defaultText: "https://fcm.googleapis.com",
              help: "FCM HTTP v1 base URL"),
        .init(name: "fcm-token-url", kind: .text, valueName: "URL", defaultText: "the service account's token_uri",
              help: "OAuth token endpoint for FCM service-account assertions, for every application"),
        .init(name: "push-ca-file", kind: .text, valueName: "FILE", defaultText: "the system's",
              help: "PEM certificates trusted for the push providers instead of the system's"),
        .init(name: "push-timeout", kind: .seconds, valueName: "SECONDS", defaultText: "10",
              help: "bound on one HTTP/2 exchange with a push provider, connect included"),
        .init(name: "push-attempts", kind: .integer, valueName: "N", defaultText: "4",
              help: "attempts per push (the first included) when the provider answers 429 or 5xx"),
        .init(name: "push-retry-delay", kind: .seconds, valueName: "SECONDS", defaultText: "0.2",
              help: "backoff before the second attempt; doubles per attempt, with jitter"),
        .init(name: "push-retry-max-delay", kind: .seconds, valueName: "SECONDS", defaultText: "5",
              help: "largest backoff between push attempts"),
    ]

    static func named(_ name: String) -> ConfigurationOption? { all.first { $0.name == name } }
}

extension String {
    fileprivate func replacingHyphens(with replacement: String) -> String {
        split(separator: "-", omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
