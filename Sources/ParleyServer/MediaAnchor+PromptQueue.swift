import ParleyCallCore
import ParleyMediaLegCore
import ParleyNetCore

extension MediaAnchor {
    /// Queues `clips` on the prompt topology of `callID`'s call, on the call's media loop,
    /// then runs `queued` on `engine` with what to wait for: the last clip's id, nil when
    /// the topology's queue refused a clip, or `UInt64.max` when the clips from index
    /// `loopFrom` on loop (a looping prompt never finishes). False, and `queued` never runs,
    /// when the call has no prompt topology. (Engine loop.)
    ///
    /// What calls the server answers (`ServerAnsweredCalls`) and places (`ServerCallouts`)
    /// both play through this.
    func queuePrompt(_ clips: [PromptLibrary.Clip], loopFrom: Int? = nil, callID: String, engine: any Scheduler,
                     queued: @escaping @Sendable (UInt64?) -> Void) -> Bool {
        withPrompts(callID: callID) { topology in
            var last: UInt64?
            for (index, clip) in clips.enumerated() {
                do throws(PromptTopology<CallLegID>.EnqueueError) {
                    last = try topology.enqueue(clip, loop: loopFrom.map { index >= $0 } ?? false)
                } catch {
                    last = nil
                    break
                }
            }
            let id = loopFrom == nil ? last : UInt64.max
            _ = engine.execute { queued(id) }
        }
    }
}
