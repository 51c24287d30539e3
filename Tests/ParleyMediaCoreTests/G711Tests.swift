import ParleyMediaCore
import Testing

@Suite("G.711")
struct G711Tests {
    // Values follow ITU-T G.711 tables 1 and 2 with the G.191 reference's 16-bit scaling
    // (decoder outputs are step midpoints; A-law codes have the even bits inverted).
    @Test("mu-law known values (G.711 table 2)")
    func muLawKnownValues() {
        let encodings: [(Int16, UInt8)] = [
            (0, 0xFF), (3, 0xFF), (4, 0xFE), (-1, 0x7F), (-4, 0x7F), (-5, 0x7E),
            (1000, 0xCE), (-1000, 0x4E), (32124, 0x80), (32767, 0x80), (-32768, 0x00),
        ]
        for (linear, code) in encodings {
            #expect(G711.muLaw(encoding: linear) == code, "mu-law(\(linear))")
        }
        let decodings: [(UInt8, Int16)] = [
            (0xFF, 0), (0x7F, 0), (0xFE, 8), (0x7E, -8), (0xF0, 120), (0xEF, 132),
            (0xCE, 988), (0x4E, -988), (0x80, 32124), (0x00, -32124),
        ]
        for (code, linear) in decodings {
            #expect(G711.muLaw(decoding: code) == linear, "mu-law decode \(code)")
        }
    }

    @Test("A-law known values (G.711 table 1)")
    func aLawKnownValues() {
        let encodings: [(Int16, UInt8)] = [
            (0, 0xD5), (15, 0xD5), (16, 0xD4), (-1, 0x55), (-16, 0x55), (-17, 0x54),
            (1000, 0xFA), (-1000, 0x7A), (32767, 0xAA), (-32768, 0x2A),
        ]
        for (linear, code) in encodings {
            #expect(G711.aLaw(encoding: linear) == code, "A-law(\(linear))")
        }
        let decodings: [(UInt8, Int16)] = [
            (0xD5, 8), (0x55, -8), (0xD4, 24), (0xFA, 1008), (0x7A, -1008), (0xAA, 32256), (0x2A, -32256),
        ]
        for (code, linear) in decodings {
            #expect(G711.aLaw(decoding: code) == linear, "A-law decode \(code)")
        }
    }

    @Test("every mu-law code decodes and re-encodes to itself, except negative zero 0x7F")
    func muLawCodesRoundTrip() {
        for code in UInt8.min...UInt8.max {
            let again = G711.muLaw(encoding: G711.muLaw(decoding: code))
            #expect(again == (code == 0x7F ? 0xFF : code), "code \(code)")
        }
        // Decoded values are strictly monotonic across the positive codes 0xFF...0x80.
        let positive = (0x80...0xFF).reversed().map { G711.muLaw(decoding: UInt8($0)) }
        #expect(zip(positive, positive.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("every A-law code decodes and re-encodes to itself")
    func aLawCodesRoundTrip() {
        for code in UInt8.min...UInt8.max {
            #expect(G711.aLaw(encoding: G711.aLaw(decoding: code)) == code, "code \(code)")
        }
        #expect(Set((0...255).map { G711.aLaw(decoding: UInt8($0)) }).count == 256)
    }

    @Test("quantisation error stays within half a step plus truncation, for all 65536 inputs")
    func errorBounds() {
        var failures: [String] = []
        for value in Int(Int16.min)...Int(Int16.max) where failures.count < 5 {
            let sample = Int16(value)
            let mu = G711.muLaw(encoding: sample)
            let muSegment = Int((~mu >> 4) & 0x07)
            let muError = abs(Int(G711.muLaw(decoding: mu)) - value)
            let muLimit = abs(value) > 32124 ? abs(value) - 32124 : (4 << muSegment) + 4
            if muError > muLimit { failures.append("mu-law \(value): error \(muError)") }

            let a = G711.aLaw(encoding: sample)
            let aSegment = Int(((a ^ 0x55) >> 4) & 0x07)
            let aError = abs(Int(G711.aLaw(decoding: a)) - value)
            let halfStep = aSegment < 2 ? 8 : 8 << (aSegment - 1)
            if aError > halfStep + 8 { failures.append("A-law \(value): error \(aError)") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("buffer forms match the per-sample forms")
    func buffers() {
        let samples: [Int16] = [0, 1, -1, 1000, -1000, 32767, -32768, 12345]
        #expect(G711.muLaw(encoding: samples) == samples.map { G711.muLaw(encoding: $0) })
        #expect(G711.aLaw(encoding: samples) == samples.map { G711.aLaw(encoding: $0) })
        let codes: [UInt8] = [0x00, 0x7F, 0x80, 0xFF, 0x55, 0xD5]
        #expect(G711.muLaw(decoding: codes) == codes.map { G711.muLaw(decoding: $0) })
        #expect(G711.aLaw(decoding: codes) == codes.map { G711.aLaw(decoding: $0) })
    }
}
