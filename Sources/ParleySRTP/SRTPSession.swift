internal import CSRTP

/// Runs `srtp_init` once per process, on first use, thread-safely (Swift initialises globals
/// once, under a lock). libsrtp's kernel then stays up for the process lifetime.
private let libraryInitStatus: Int32 = Int32(bitPattern: UInt32(truncatingIfNeeded: srtp_init().rawValue))

extension SRTPSession {
    /// Initialises libsrtp now rather than at the first session. `srtp_init` runs the
    /// crypto kernel's self-tests, 60-180 ms on this machine; done lazily it fell on the
    /// first call's DTLS completion, between the handshake and its final flight, in every
    /// new process (a softphone per call, an app woken by a VoIP push). Returns whether
    /// libsrtp is usable. Safe from any thread; the work is done once.
    @discardableResult
    public static func initializeLibrary() -> Bool { libraryInitStatus == 0 }
}

/// Which way a session's packets flow. libsrtp keeps the two apart on purpose (a key is used
/// either to send or to receive, never both), so a call leg has one session per direction.
public enum SRTPDirection: String, Sendable, Hashable, Codable {
    /// Packets we receive: `unprotect` and `unprotectRTCP` (libsrtp `ssrc_any_inbound`).
    case inbound
    /// Packets we send: `protect` and `protectRTCP` (libsrtp `ssrc_any_outbound`).
    case outbound
}

/// One libsrtp session (`srtp_t`) for one direction of one call leg, keyed by a profile and
/// master key material (RFC 3711, RFC 5764, RFC 7714).
///
/// Any SSRC is accepted: libsrtp adds a stream the first time it sees an SSRC (on the
/// inbound side, only once that first packet has authenticated). Replay protection is on
/// (RFC 3711 §3.3.2), and sending the same RTP sequence number twice is refused
/// (`allow_repeat_tx` off).
///
/// Three shapes of the same four operations, from simplest to fastest:
/// - `protect(rtp:)` etc. take and return `[UInt8]` (one allocation per call);
/// - `protectInPlace(_:)` etc. work on the caller's array (no allocation once it has capacity);
/// - `protect(buffer:length:)` etc. work on a raw buffer the caller owns (for I/O loops).
///
/// Every call adds one to exactly one of `counters`. A failed unprotect never returns the
/// packet's bytes.
///
/// Not `Sendable`: libsrtp sessions are not thread-safe, so confine a session to one thread or
/// actor (a session can be handed over with `sending`).
public final class SRTPSession {
    /// The session's protection profile.
    public let profile: SRTPProfile
    /// Whether this session protects (outbound) or unprotects (inbound).
    public let direction: SRTPDirection
    /// The replay window, in packets.
    public let replayWindow: Int
    /// What this session has done so far.
    public private(set) var counters = SRTPCounters()

    private let session: srtp_t

    /// The replay window libsrtp uses unless told otherwise.
    public static let defaultReplayWindow = 128
    /// The replay windows libsrtp accepts (it refuses below 64 and from 0x8000 up).
    public static let replayWindowRange = 64...0x7fff
    /// Longest packet accepted (the largest UDP payload); keeps libsrtp's `int` lengths safe.
    public static let maximumPacketLength = 65_535

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - profile: the negotiated protection profile.
    ///   - keyMaterial: master key followed by master salt, `profile.keyMaterialLength` bytes
    ///     (RFC 5764 §4.2: for the DTLS client's writes, `client_write_SRTP_master_key ||
    ///     client_write_SRTP_master_salt`).
    ///   - direction: `.outbound` to protect, `.inbound` to unprotect.
    ///   - replayWindow: replay window in packets, within `replayWindowRange`.
    /// - Throws: `SRTPError` of kind `badParameter` for a wrong key length or window, or the
    ///   libsrtp failure.
    public init(
        profile: SRTPProfile,
        keyMaterial: [UInt8],
        direction: SRTPDirection,
        replayWindow: Int = SRTPSession.defaultReplayWindow
    ) throws(SRTPError) {
        guard libraryInitStatus == 0 else {
            throw SRTPError(libsrtpStatus: libraryInitStatus, operation: .create, length: keyMaterial.count)
        }
        guard keyMaterial.count == profile.keyMaterialLength else {
            throw SRTPError(.badParameter, .create, length: keyMaterial.count,
                            detail: "\(profile.rawValue) needs \(profile.keyMaterialLength) bytes of key material (key \(profile.masterKeyLength) + salt \(profile.masterSaltLength)), have \(keyMaterial.count)")
        }
        guard Self.replayWindowRange.contains(replayWindow) else {
            throw SRTPError(.badParameter, .create, length: keyMaterial.count,
                            detail: "replay window \(replayWindow) outside \(Self.replayWindowRange.lowerBound)...\(Self.replayWindowRange.upperBound)")
        }
        var policy = srtp_policy_t()
        switch profile {
        case .aes128CmHmacSha1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aes128CmHmacSha1_32:
            // The 32-bit tag is for SRTP only; SRTCP keeps the 80-bit one (RFC 4568 §6.2.2).
            srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        case .aeadAes128Gcm:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        }
        policy.ssrc.type = direction == .inbound ? ssrc_any_inbound : ssrc_any_outbound
        policy.ssrc.value = 0
        policy.window_size = UInt(replayWindow)
        policy.allow_repeat_tx = 0
        policy.next = nil

        // libsrtp keeps only the session keys it derives during srtp_create; our copy of the
        // master key is wiped after (best effort: the caller's array is the caller's).
        var key = keyMaterial
        var created: srtp_t? = nil
        let status = key.withUnsafeMutableBufferPointer { keyBytes in
            policy.key = keyBytes.baseAddress
            defer { policy.key = nil }
            return srtp_create(&created, &policy)
        }
        for index in key.indices { key[index] = 0 }
        guard status == srtp_err_status_ok, let created else {
            if let created { srtp_dealloc(created) }
            throw SRTPError(libsrtpStatus: Int32(bitPattern: UInt32(truncatingIfNeeded: status.rawValue)),
                            operation: .create, length: keyMaterial.count)
        }
        self.session = created
        self.profile = profile
        self.direction = direction
        self.replayWindow = replayWindow
    }

    deinit {
        srtp_dealloc(session)
    }

    // MARK: Arrays in, arrays out

    /// Protects one RTP packet, returning header, encrypted payload and tag.
    public func protect(rtp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try copyAndRun(.protect, packet, trailer: profile.rtpTrailerLength)
    }

    /// Authenticates and decrypts one SRTP packet, returning the RTP packet.
    public func unprotect(srtp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try copyAndRun(.unprotect, packet, trailer: 0)
    }

    /// Protects one (compound) RTCP packet, returning it encrypted with the SRTCP index and tag.
    public func protectRTCP(rtcp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try copyAndRun(.protectRTCP, packet, trailer: profile.rtcpTrailerLength)
    }

    /// Authenticates and decrypts one SRTCP packet, returning the RTCP packet.
    public func unprotectRTCP(srtcp packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try copyAndRun(.unprotectRTCP, packet, trailer: 0)
    }

    // MARK: In place on the caller's array

    /// Protects `packet` in place: it grows by `profile.rtpTrailerLength`. Reserve that much
    /// extra capacity and no allocation happens. On error `packet` keeps its length, but its
    /// contents are unspecified.
    public func protectInPlace(_ packet: inout [UInt8]) throws(SRTPError) {
        try runInPlace(.protect, &packet, trailer: profile.rtpTrailerLength)
    }

    /// Unprotects `packet` in place: it shrinks to the RTP packet. On error its contents are
    /// unspecified (never treat them as a packet).
    public func unprotectInPlace(_ packet: inout [UInt8]) throws(SRTPError) {
        try runInPlace(.unprotect, &packet, trailer: 0)
    }

    /// Protects an RTCP packet in place: it grows by `profile.rtcpTrailerLength`.
    public func protectRTCPInPlace(_ packet: inout [UInt8]) throws(SRTPError) {
        try runInPlace(.protectRTCP, &packet, trailer: profile.rtcpTrailerLength)
    }

    /// Unprotects an SRTCP packet in place: it shrinks to the RTCP packet.
    public func unprotectRTCPInPlace(_ packet: inout [UInt8]) throws(SRTPError) {
        try runInPlace(.unprotectRTCP, &packet, trailer: 0)
    }

    // MARK: Raw buffers owned by the caller

    /// Protects the RTP packet in the first `length` bytes of `buffer`, in place, and returns
    /// the protected length. `buffer` must have `profile.rtpTrailerLength` bytes of room after
    /// the packet.
    public func protect(buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(.protect, buffer, length: length)
    }

    /// Unprotects the SRTP packet in the first `length` bytes of `buffer`, in place, and returns
    /// the RTP packet's length.
    public func unprotect(buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(.unprotect, buffer, length: length)
    }

    /// Protects the RTCP packet in the first `length` bytes of `buffer`, in place; needs
    /// `profile.rtcpTrailerLength` bytes of room after it. Returns the SRTCP length.
    public func protectRTCP(buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(.protectRTCP, buffer, length: length)
    }

    /// Unprotects the SRTCP packet in the first `length` bytes of `buffer`, in place, and returns
    /// the RTCP packet's length.
    public func unprotectRTCP(buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(.unprotectRTCP, buffer, length: length)
    }

    // MARK: Streams

    /// The rollover counter (RFC 3711 §3.3.1) of the stream for `ssrc`, or nil when no packet
    /// of that SSRC has been processed yet.
    public func rolloverCounter(ssrc: UInt32) -> UInt32? {
        var roc: UInt32 = 0
        return srtp_get_stream_roc(session, ssrc, &roc) == srtp_err_status_ok ? roc : nil
    }

    /// Forgets the stream for `ssrc` (its replay state and rollover counter), e.g. when a
    /// source leaves; a later packet with that SSRC starts a new stream. Returns whether there
    /// was one.
    @discardableResult
    public func removeStream(ssrc: UInt32) -> Bool {
        srtp_remove_stream(session, ssrc.bigEndian) == srtp_err_status_ok
    }

    // MARK: Implementation

    private func copyAndRun(_ operation: SRTPError.Operation, _ packet: [UInt8], trailer: Int) throws(SRTPError) -> [UInt8] {
        guard packet.count <= Self.maximumPacketLength else {
            // Checked before allocating so a huge input cannot make us reserve more.
            _ = try run(operation, UnsafeMutableRawBufferPointer(start: nil, count: 0), length: packet.count)
            return []
        }
        var failure: SRTPError? = nil
        let output = [UInt8](unsafeUninitializedCapacity: packet.count + trailer) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            packet.withUnsafeBytes { raw.copyMemory(from: $0) }
            do throws(SRTPError) {
                initialized = try run(operation, raw, length: packet.count)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return output
    }

    private func runInPlace(_ operation: SRTPError.Operation, _ packet: inout [UInt8], trailer: Int) throws(SRTPError) {
        let length = packet.count
        if trailer > 0 { packet.append(contentsOf: repeatElement(0, count: trailer)) }
        var result: Result<Int, SRTPError> = .success(0)
        packet.withUnsafeMutableBytes { raw in
            do throws(SRTPError) { result = .success(try run(operation, raw, length: length)) } catch { result = .failure(error) }
        }
        switch result {
        case .success(let newLength):
            packet.removeLast(packet.count - newLength)
        case .failure(let error):
            packet.removeLast(packet.count - length)
            throw error
        }
    }

    /// Counts the outcome of one operation.
    private func run(_ operation: SRTPError.Operation, _ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        do throws(SRTPError) {
            let newLength = try call(operation, buffer, length: length)
            switch operation {
            case .protect, .protectRTCP: counters.protected &+= 1
            default: counters.unprotected &+= 1
            }
            return newLength
        } catch {
            counters[keyPath: error.kind.counter] &+= 1
            throw error
        }
    }

    /// Checks lengths and direction in Swift, so that libsrtp only ever sees packets whose
    /// header and tag fit, then calls libsrtp.
    private func call(_ operation: SRTPError.Operation, _ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        let protecting = operation == .protect || operation == .protectRTCP
        guard protecting == (direction == .outbound) else {
            throw SRTPError(.wrongDirection, operation, length: length,
                            detail: "\(operation.rawValue) on an \(direction.rawValue) session")
        }
        guard length >= 0, length <= Self.maximumPacketLength else {
            throw SRTPError(.badParameter, operation, length: length,
                            detail: "packet length \(length) outside 0...\(Self.maximumPacketLength)")
        }
        guard length <= buffer.count else {
            throw SRTPError(.badParameter, operation, length: length,
                            detail: "packet length \(length) exceeds the \(buffer.count)-byte buffer")
        }
        let rtcp = operation == .protectRTCP || operation == .unprotectRTCP
        // RFC 3550 §6.4.1: every RTCP packet starts with 8 bytes (header and sender SSRC).
        let header = rtcp ? (length >= 8 ? 8 : nil) : Self.rtpHeaderLength(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        guard let header, let base = buffer.baseAddress else {
            throw SRTPError(.truncated, operation, length: length,
                            detail: rtcp ? "need 8 bytes of RTCP header, have \(length)" : "RTP header (with CSRCs and extension) does not fit in \(length) bytes")
        }
        if protecting {
            let room = rtcp ? profile.rtcpTrailerLength : profile.rtpTrailerLength
            guard buffer.count - length >= room else {
                throw SRTPError(.bufferTooSmall, operation, length: length,
                                detail: "need \(room) bytes of room after the packet, have \(buffer.count - length)")
            }
        } else {
            // RFC 3711 §3.4: SRTCP carries the E flag and index (4 bytes) before the tag.
            let trailer = rtcp ? profile.rtcpTrailerLength : profile.rtpTagLength
            guard length >= header + trailer else {
                throw SRTPError(.truncated, operation, length: length,
                                detail: "need \(header + trailer) bytes for header and trailer, have \(length)")
            }
        }
        var cLength = Int32(length)
        let status: srtp_err_status_t
        switch operation {
        case .protect: status = srtp_protect(session, base, &cLength)
        case .unprotect: status = srtp_unprotect(session, base, &cLength)
        case .protectRTCP: status = srtp_protect_rtcp(session, base, &cLength)
        case .unprotectRTCP: status = srtp_unprotect_rtcp(session, base, &cLength)
        case .create: status = srtp_err_status_bad_param
        }
        guard status == srtp_err_status_ok else {
            throw SRTPError(libsrtpStatus: Int32(bitPattern: UInt32(truncatingIfNeeded: status.rawValue)),
                            operation: operation, length: length)
        }
        guard cLength >= 0, Int(cLength) <= buffer.count else {
            // Never expected from libsrtp; refuse rather than hand back bytes outside the buffer.
            throw SRTPError(.libraryFailure, operation, length: length, detail: "libsrtp returned length \(cLength) for a \(buffer.count)-byte buffer")
        }
        return Int(cLength)
    }

    /// Length of the RTP fixed header, CSRC list and header extension (RFC 3550 §5.1, §5.3.1),
    /// or nil when the bytes cannot hold them.
    ///
    ///     0                   1                   2                   3
    ///    |V=2|P|X|  CC   |M|     PT      |       sequence number         |
    ///    |                           timestamp                           |
    ///    |                             SSRC                              |
    ///    |                     CSRC list (CC x 4 bytes)                  |
    ///    |      defined by profile       |     length (32-bit words)     |  (if X)
    static func rtpHeaderLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 12 else { return nil }
        var header = 12 + Int(bytes[0] & 0x0f) * 4
        if bytes[0] & 0x10 != 0 {
            guard bytes.count >= header + 4 else { return nil }
            header += 4 + (Int(bytes[header + 2]) << 8 | Int(bytes[header + 3])) * 4
        }
        return header <= bytes.count ? header : nil
    }
}
