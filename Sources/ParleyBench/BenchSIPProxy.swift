import Glibc

// Kamailio as a stateful proxy between a SIPp uac and a SIPp uas (the `proxy` row of the
// `sip` group): SIPp's built-in scenarios, calls of zero length (INVITE, 180, 200, ACK,
// BYE, 200: six messages through the proxy, plus the 100 Trying it sends itself), at a
// rising call rate for a few seconds each. Kamailio's CPU per call is the peer figure the
// gateway's signalling cost is set beside.

/// One call rate of the proxy row.
struct ProxyStep {
    let targetRate: Int
    let placed: Int
    let successful: Int
    let failed: Int
    /// Retransmissions by the uac (INVITE, BYE) and the uas (200 OK until the ACK).
    let retransmissions: Int
    /// Successful calls over the uac's run.
    let achievedRate: Double
    /// Mean INVITE -> 200 as the uac saw it, seconds.
    let responseTime: Double?
    /// Kamailio's CPU (every process) above its idle level, per successful call, seconds.
    let proxySecondsPerCall: Double
    /// Kamailio's cores while the uac ran (the tail for tm's wait timer not included).
    let proxyCores: Double
    /// Kamailio's cores before the first rate, with no traffic (its timer processes).
    let proxyIdleCores: Double
    let uacCores: Double
    let uasCores: Double
    let machineCores: Double
    let failure: String?
    /// The uas's retransmissions since it started (its statistics are cumulative over the row).
    let uasRetransmissionsSoFar: Int

    /// No failed call, no retransmission, and the rate asked for reached within 10 %.
    var clean: Bool { failure == nil && failed == 0 && retransmissions == 0 && achievedRate >= 0.9 * Double(targetRate) }
}

/// After the uac's last call, the CPU window stays open this long: tm keeps each completed
/// transaction for its wait timer (5 s by default) and frees it then, work each call costs.
let proxyQuietSeconds = 5.5

/// What a uac's calls go through on their way to the uas: Kamailio (the proxy row) or
/// parleyd bridging them (the bridge row).
protocol SIPServerUnderLoad {
    /// Where the uac sends its INVITEs, `127.0.0.1:PORT`.
    var sipAddress: String { get }
    /// The Request-URI user the uac dials (nil: SIPp's `service`).
    var dialledUser: String? { get }
    /// User plus system CPU seconds of the server, every process and thread.
    func cpuSeconds() -> Double
}

extension KamailioProxy: SIPServerUnderLoad {
    var sipAddress: String { address }
    var dialledUser: String? { nil }
}

/// Runs the rates in order against one server (Kamailio, or parleyd bridging); stops after
/// a rate with failed calls or one the load generator could not reach within 10 % (the
/// server or SIPp overloaded).
func runProxySteps(kamailio: some SIPServerUnderLoad, uas: SIPpProcess, rates: [Int], seconds: Int, directory: String,
                   progress: (ProxyStep) -> Void) -> [ProxyStep] {
    var results: [ProxyStep] = []
    let idleBefore = kamailio.cpuSeconds(), idleStart = wallSeconds()
    usleep(2_000_000)
    let idleCores = (kamailio.cpuSeconds() - idleBefore) / (wallSeconds() - idleStart)
    for rate in rates {
        let calls = rate * seconds
        let proxyBefore = kamailio.cpuSeconds(), uasBefore = uas.cpuSeconds()
        let machineBefore = MachineCPU.now()
        let start = wallSeconds()
        let step: ProxyStep
        do {
            let uac = try SIPpProcess.uac(target: kamailio.sipAddress, rate: rate, calls: calls, durationMs: 0,
                                          timeoutSeconds: seconds + 30, directory: directory, service: kamailio.dialledUser)
            defer { uac.stop() }
            // The uac's CPU is read while it runs: once it has exited and been reaped, /proc
            // has nothing left of it.
            var finished = false, uacCPU = 0.0
            let deadline = start + Double(seconds + 35)
            while wallSeconds() < deadline {
                if let cpu = uac.child.cpuSeconds() { uacCPU = cpu }
                if uac.waitForExit(timeoutMs: 100) {
                    finished = true
                    break
                }
            }
            let ran = wallSeconds() - start
            let proxyRun = kamailio.cpuSeconds() - proxyBefore
            let uasCPU = uas.cpuSeconds() - uasBefore
            let machineCores = MachineCPU.busyCores(since: machineBefore)
            usleep(UInt32(proxyQuietSeconds * 1e6))
            let window = wallSeconds() - start
            let proxyCPU = kamailio.cpuSeconds() - proxyBefore
            let statistics = try uac.statistics()
            let successful = statistics.successfulCalls
            // The uas's statistics are cumulative over the row (its file gets a row a
            // second): this rate's retransmissions are the difference from the last rate's.
            let uasRetransmissions = (try? uas.statistics().retransmissions) ?? 0
            let previousUAS = results.last?.uasRetransmissionsSoFar ?? 0
            step = ProxyStep(
                targetRate: rate, placed: statistics.outgoingCalls, successful: successful, failed: statistics.failedCalls + (finished ? 0 : 1),
                retransmissions: statistics.retransmissions + max(0, uasRetransmissions - previousUAS),
                achievedRate: Double(successful) / max(statistics.elapsedSeconds ?? ran, 1e-3), responseTime: statistics.responseTime1Seconds,
                proxySecondsPerCall: max(0, proxyCPU - idleCores * window) / Double(max(successful, 1)),
                proxyCores: proxyRun / ran, proxyIdleCores: idleCores, uacCores: uacCPU / ran, uasCores: uasCPU / ran, machineCores: machineCores,
                failure: finished ? nil : "the uac did not finish within \(seconds + 35) s", uasRetransmissionsSoFar: uasRetransmissions)
        } catch {
            step = ProxyStep(targetRate: rate, placed: 0, successful: 0, failed: 0, retransmissions: 0, achievedRate: 0, responseTime: nil,
                             proxySecondsPerCall: .nan, proxyCores: .nan, proxyIdleCores: idleCores, uacCores: .nan, uasCores: .nan, machineCores: .nan,
                             failure: "\(error)", uasRetransmissionsSoFar: results.last?.uasRetransmissionsSoFar ?? 0)
        }
        results.append(step)
        progress(step)
        if step.failure != nil || step.failed > 0 || step.achievedRate < 0.9 * Double(rate) { break }
    }
    return results
}
