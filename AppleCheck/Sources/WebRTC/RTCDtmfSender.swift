// Follows sdk/objc/api/peerconnection/RTCDtmfSender.h: a protocol (`<NSObject>`) with
// `canInsertDtmf` (true once the sender can send and telephone-event was negotiated),
// `insertDtmf:duration:interToneGap:` (NSTimeInterval seconds; returns whether the task
// was queued; 0-9 A-D # * with a-d as A-D, ',' a 2 s pause, other characters ignored;
// duration 70 ms to 6 s, gap at least 50 ms; a new call cancels the queued tones),
// `remainingTones`, `duration` and `interToneGap`. The mirror sends through our leg's
// `MediaLeg.sendDTMF` (RFC 4733, paced in real time).
import MirrorSupport

/// Sends DTMF as RFC 4733 telephone events.
public protocol RTCDtmfSender: NSObjectProtocol {
    /// Whether DTMF can be sent now.
    var canInsertDtmf: Bool { get }
    /// Queues `tones`; returns false if they cannot be sent.
    func insertDtmf(_ tones: String, duration: TimeInterval, interToneGap: TimeInterval) -> Bool
    /// The tones not yet sent.
    func remainingTones() -> String
    /// The tone duration last set (seconds).
    func duration() -> TimeInterval
    /// The gap last set (seconds).
    func interToneGap() -> TimeInterval
}

/// The mirror's DTMF sender of an audio `RTCRtpSender`.
final class MirrorDtmfSender: NSObject, RTCDtmfSender, @unchecked Sendable {
    // @unchecked: `peer` is immutable and Sendable; the rest is behind `state`.
    private struct State {
        var remaining = ""
        var duration: TimeInterval = 0.1
        var gap: TimeInterval = 0.05
        var task: Task<Void, Never>?
    }

    private let peer: MirrorPeer
    private let state = MirrorLocked(State())

    init(peer: MirrorPeer) { self.peer = peer }

    var canInsertDtmf: Bool { peer.canSendTelephoneEvents }

    func insertDtmf(_ tones: String, duration: TimeInterval, interToneGap: TimeInterval) -> Bool {
        guard canInsertDtmf, (0.07...6).contains(duration), interToneGap >= 0.05 else { return false }
        // As the header says: a-d are A-D, ',' pauses, anything else is dropped.
        let kept = String(tones.uppercased().filter { "0123456789ABCD#*,".contains($0) })
        state.withLock { state in
            state.task?.cancel()
            state.remaining = kept
            state.duration = duration
            state.gap = interToneGap
            let peer = peer
            state.task = Task { [weak self] in
                let toneDuration = Duration.milliseconds(Int(duration * 1000))
                let gap = Duration.milliseconds(Int(interToneGap * 1000))
                for (index, run) in kept.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                    if Task.isCancelled { return }
                    if index > 0 { try? await Task.sleep(for: .seconds(2)) }
                    if !run.isEmpty { _ = await peer.sendDTMF(String(run), duration: toneDuration, gap: gap) }
                    self?.state.withLock { $0.remaining = String($0.remaining.drop { $0 != "," }.dropFirst()) }
                }
                self?.state.withLock { $0.remaining = "" }
            }
        }
        return true
    }

    func remainingTones() -> String { state.current.remaining }
    func duration() -> TimeInterval { state.current.duration }
    func interToneGap() -> TimeInterval { state.current.gap }
}
