import ParleyTestSupport

/// The shared seeded generator, so every random test of this suite repeats.
typealias SeededGeneratorForTests = SeededGenerator
