import Testing

/// Suites that run device threads against the real clock. They run one at a time, in the
/// second pass of `make test` (`--filter RealTimeMediaTests`), so that the parallel tests'
/// blocking waits do not starve their 20 ms pulls.
@Suite(.serialized) enum RealTimeMediaTests {}
