import Testing

/// Every end-to-end case: a real `parleyd` and real `parley` processes placing calls with
/// real-time audio on loopback. They run one at a time, and the name makes `make test`
/// run them in its second pass (`--filter RealTimeMediaTests`), away from CPU-heavy
/// suites that would starve the 20 ms pacers. The binaries come from the build
/// directory: `swift build` must have run first (`make test` does).
@Suite(.serialized) enum EndToEndRealTimeMediaTests {}
