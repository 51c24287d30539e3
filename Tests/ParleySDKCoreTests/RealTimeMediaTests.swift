import Testing

/// Suites of this target that run whole `ParleyClient`s, whose work runs on Swift's
/// cooperative thread pool: `make test` runs them in its second pass
/// (`--filter RealTimeMediaTests`), one at a time, because in the parallel pass other
/// suites' blocking waits can hold every cooperative thread for seconds and starve the
/// client (seen there as a `clientDidStart` that came after the test gave up).
@Suite(.serialized) enum RealTimeMediaTests {}
