import Testing

/// Suites that pace audio in real time or drive a child process with second-long waits
/// (the conference load generator, Janus): `make test` runs them after the others, one at a
/// time (see the Makefile's `unit-test`), so CPU-heavy tests do not starve their 20 ms pacing.
@Suite(.serialized) enum RealTimeMediaTests {}
