import ParleySTUN

/// Parses the input as one STUN message. Whatever parses must encode back to the same bytes,
/// decode again to the same value, and survive every check and accessor; any of those
/// failing is a real bug and traps.
func fuzzSTUN(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    _ = STUNMessage.looksLikeSTUN(bytes)
    let message: STUNMessage
    do { message = try STUNMessage(decoding: bytes) } catch { return }
    // RFC 7983 demultiplexing only claims first bytes 0...3, i.e. methods below 0x100.
    guard STUNMessage.looksLikeSTUN(bytes) == (message.method.rawValue < 0x100) else {
        fatalError("looksLikeSTUN disagrees with the parsed method \(message.method)")
    }

    let encoded: [UInt8]
    do { encoded = try message.encoded() } catch { fatalError("parsed message does not encode: \(error)") }
    guard encoded == bytes else { fatalError("re-encoding changed the bytes") }
    let again: STUNMessage
    do { again = try STUNMessage(decoding: encoded) } catch { fatalError("re-encoded message does not parse: \(error)") }
    guard again == message else { fatalError("re-parsed message differs") }

    let key = STUNIntegrityKey.shortTerm(password: "fuzz")
    _ = message.verification(key: key)
    _ = message.unknownComprehensionRequired
    for index in message.attributes.indices where !message.isIgnored(attributeAt: index) {
        do { _ = try message.attributes[index].decoded(transactionID: message.transactionID) } catch {
            fatalError("processed attribute \(index) passed parsing but does not decode: \(error)")
        }
    }
    _ = (message.xorMappedAddress, message.mappedAddress, message.username, message.errorCode, message.unknownAttributes)

    // Signing what was parsed must give a message whose checks pass.
    let stripped = message.removingTrailers()
    if let signed = try? stripped.encoded(addingIntegrity: [.sha1(key: key), .sha256(key: key, length: 16)], fingerprint: true) {
        guard let parsed = try? STUNMessage(decoding: signed) else { fatalError("signed message does not parse") }
        let verdicts = parsed.verification(key: key)
        guard verdicts == STUNVerification(messageIntegrity: .valid, messageIntegritySHA256: .valid, fingerprint: .valid) else {
            fatalError("signed message does not verify: \(verdicts)")
        }
    }
}
