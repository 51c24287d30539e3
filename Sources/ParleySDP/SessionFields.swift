// The structured session- and media-level lines of RFC 8866 §5 other than a= and m=.

extension SessionDescription {
    /// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>`
    /// (RFC 8866 §5.2). The numbers stay text so that what was parsed serializes back
    /// byte for byte (they may be longer than 64 bits and may carry leading zeros).
    public struct Origin: Sendable, Hashable, Encodable {
        public var username: String
        /// Digits only.
        public var sessionID: String
        /// Digits only; a new offer in the same session increments it.
        public var sessionVersion: String
        public var networkType: String
        public var addressType: String
        public var address: String

        public init(username: String = "-", sessionID: String, sessionVersion: String, networkType: String = "IN", addressType: String = "IP4", address: String = "0.0.0.0") {
            self.username = username
            self.sessionID = sessionID
            self.sessionVersion = sessionVersion
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }

        var lineValue: String {
            "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)"
        }
    }

    /// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 §5.7). For multicast the
    /// address keeps its `/ttl/count` suffix as written.
    public struct Connection: Sendable, Hashable, Encodable {
        public var networkType: String
        public var addressType: String
        public var address: String

        public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }

        /// `IN IP4 <address>` or `IN IP6 <address>`, by whether the address has a colon.
        public init(address: String) {
            self.init(networkType: "IN", addressType: address.contains(":") ? "IP6" : "IP4", address: address)
        }

        var lineValue: String { "\(networkType) \(addressType) \(address)" }
    }

    /// `b=<bwtype>:<bandwidth>` (RFC 8866 §5.8), for example `AS:64` in kbit/s.
    public struct Bandwidth: Sendable, Hashable, Encodable {
        public var type: String
        public var value: UInt64

        public init(type: String, value: UInt64) {
            self.type = type
            self.value = value
        }

        var lineValue: String { "\(type):\(value)" }
    }

    /// `t=<start-time> <stop-time>` (RFC 8866 §5.9) with the `r=` lines that follow it
    /// (§5.10), kept as written since their units (`d`, `h`, `m`, `s`) matter to nobody
    /// in real-time calls.
    public struct Timing: Sendable, Hashable, Encodable {
        /// NTP seconds; 0 means unbounded.
        public var start: UInt64
        public var stop: UInt64
        /// The values of the `r=` lines, in order.
        public var repeats: [String]

        public init(start: UInt64 = 0, stop: UInt64 = 0, repeats: [String] = []) {
            self.start = start
            self.stop = stop
            self.repeats = repeats
        }
    }
}
