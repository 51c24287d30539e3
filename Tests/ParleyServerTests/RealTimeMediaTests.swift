import Testing

/// Suites that run audio in real time through the server's media anchor. They run one at
/// a time, in the second pass of `make test` (`--filter RealTimeMediaTests`), so that a
/// starved 20 ms pacer does not make them miss their frame counts.
@Suite(.serialized) enum RealTimeMediaTests {}
