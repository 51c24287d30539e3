import Testing

/// Suites that run audio in real time (loopback legs, aiortc, Chromium). They run one at a
/// time so that they do not take each other's CPU; each still checks 95 % of the frames
/// and the delay, which a starved 20 ms pacer could not meet.
@Suite(.serialized) enum RealTimeMediaTests {}
