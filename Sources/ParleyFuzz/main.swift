// libFuzzer driver for every wire-format parser.
//
// Built for real only by `make fuzz` (with -sanitize=fuzzer,address and -DPARLEY_FUZZ);
// in a normal build it compiles to a program that says how to build it, so the fuzzer
// runtime never leaks into the ordinary build.
//
// Usage (after `make fuzz-build`): ParleyFuzz <target> [libFuzzer flags] [corpus dirs]
// where <target> is one of the keys of `fuzzTargets`.

/// Each entry feeds one input to one parser; a parser must throw or return, never trap.
let fuzzTargets: [String: (UnsafeRawBufferPointer) -> Void] = [
    "stun": fuzzSTUN,
    "rtp": fuzzRTP,
    "rtcp": fuzzRTCP,
    "sdp": fuzzSDP,
    "sip": fuzzSIP,
    "ws": fuzzWebSocket,
    "signaling": fuzzSignaling,
    "srtp": fuzzSRTP,
    "ice": fuzzICE,
    "wav": fuzzWAV,
    "jwt": fuzzJWT,
    "http": fuzzHTTP,
    "red": fuzzRED,
]

#if PARLEY_FUZZ
import Glibc

nonisolated(unsafe) var selectedTarget: ((UnsafeRawBufferPointer) -> Void)? = nil

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    selectedTarget?(buffer)
    return 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let target = fuzzTargets[arguments[1]] else {
    print("usage: ParleyFuzz <\(fuzzTargets.keys.sorted().joined(separator: "|"))> [libFuzzer options] [corpus]")
    exit(2)
}
selectedTarget = target
// Hand libFuzzer argv without our target name.
var argc = CommandLine.argc - 1
var argv = CommandLine.unsafeArgv
argv[1] = argv[0]
var shifted = argv.advanced(by: 1)
exit(LLVMFuzzerRunDriver(&argc, &shifted) { data, size in fuzzOneInput(data, size) })
#else
print("ParleyFuzz is built by `make fuzz` (needs -sanitize=fuzzer and -DPARLEY_FUZZ). Targets: \(fuzzTargets.keys.sorted().joined(separator: ", "))")
#endif
