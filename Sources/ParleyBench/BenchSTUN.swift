import ParleySTUN

/// STUN throughput on an ICE connectivity check as browsers send it: USERNAME, PRIORITY,
/// ICE-CONTROLLING, USE-CANDIDATE, MESSAGE-INTEGRITY and FINGERPRINT (116 bytes), and on the
/// RFC 5769 §2.2 success response.
func stunBenchmarks() -> [Benchmark] {
    let key = STUNIntegrityKey.shortTerm(password: "ice-password-22-chars!")
    let transactionID = STUNTransactionID(bytes: (1...12).map { UInt8($0) })!
    var request = STUNMessage(class: .request, method: .binding, transactionID: transactionID)
    // Values are constants within range: these cannot fail.
    try! request.append(.username("Wm3n:x9Q2"))
    try! request.append(.priority(0x6E7F_1EFF))
    try! request.append(.iceControlling(tieBreaker: 0x0123_4567_89AB_CDEF))
    try! request.append(.useCandidate)
    let requestBytes = try! request.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true)
    let signedRequest = try! STUNMessage(decoding: requestBytes)

    var response = STUNMessage(class: .success, method: .binding, transactionID: transactionID)
    try! response.append(.xorMappedAddress(STUNTransportAddress(ip: .ipv4(0xC000_0201), port: 32853)))
    let responseBytes = try! response.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true)

    return [
        Benchmark(format: "stun", operation: "parse ICE binding request", messageBytes: requestBytes.count) {
            if let message = try? STUNMessage(decoding: requestBytes) { benchmarkSink &+= message.attributes.count }
        },
        Benchmark(format: "stun", operation: "parse + verify MI and FINGERPRINT", messageBytes: requestBytes.count) {
            if let message = try? STUNMessage(decoding: requestBytes), message.verifyMessageIntegrity(key: key) == .valid,
               message.verifyFingerprint() == .valid {
                benchmarkSink &+= 1
            }
        },
        Benchmark(format: "stun", operation: "serialize ICE binding request", messageBytes: requestBytes.count) {
            if let bytes = try? signedRequest.encoded() { benchmarkSink &+= bytes.count }
        },
        Benchmark(format: "stun", operation: "serialize + sign MI and FINGERPRINT", messageBytes: responseBytes.count) {
            if let bytes = try? response.encoded(addingIntegrity: [.sha1(key: key)], fingerprint: true) { benchmarkSink &+= bytes.count }
        },
        Benchmark(format: "stun", operation: "parse success + XOR-MAPPED-ADDRESS", messageBytes: responseBytes.count) {
            if let message = try? STUNMessage(decoding: responseBytes), let address = message.xorMappedAddress {
                benchmarkSink &+= Int(address.port)
            }
        },
    ]
}
