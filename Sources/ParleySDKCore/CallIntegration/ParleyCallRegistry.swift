public import Foundation

/// The system call UUID of each Parley call and back, and the call objects once they
/// exist, thread-safe. A call is claimed once: a second push for the same call id finds it
/// and is not reported again. `activeCalls` hands the calls back (the guides' registry
/// does the same: on a provider reset every one of them is hung up).
public final class ParleyCallRegistry: Sendable {
    private struct Maps {
        var uuidByCallID: [String: UUID] = [:]
        var callIDByUUID: [UUID: String] = [:]
        var callByCallID: [String: ParleyCall] = [:]
    }

    private let maps = Locked(Maps())

    /// An empty registry.
    public init() {}

    /// The UUID of `callId`, creating one if the call is new. `isNew` is false when the
    /// call was already registered (a duplicate push, or a push after `call.incoming`).
    public func claim(callId: String) -> (uuid: UUID, isNew: Bool) {
        maps.withLock { maps in
            if let uuid = maps.uuidByCallID[callId] { return (uuid, false) }
            let uuid = UUID()
            maps.uuidByCallID[callId] = uuid
            maps.callIDByUUID[uuid] = callId
            return (uuid, true)
        }
    }

    /// Links `uuid` (chosen for an outgoing call before its call id existed) to `callId`.
    /// Returns false, changing nothing, if either is already linked elsewhere.
    @discardableResult
    public func link(uuid: UUID, callId: String) -> Bool {
        maps.withLock { maps in
            guard maps.uuidByCallID[callId] == nil, maps.callIDByUUID[uuid] == nil else {
                return maps.uuidByCallID[callId] == uuid
            }
            maps.uuidByCallID[callId] = uuid
            maps.callIDByUUID[uuid] = callId
            return true
        }
    }

    /// Keeps `call` with its registered call id, so `call(forCallId:)` and `activeCalls`
    /// find it. Returns false, keeping nothing, if its call id is not registered.
    @discardableResult
    public func attach(_ call: ParleyCall) -> Bool {
        maps.withLock { maps in
            guard maps.uuidByCallID[call.callId] != nil else { return false }
            maps.callByCallID[call.callId] = call
            return true
        }
    }

    /// The call object of `callId`, once attached.
    public func call(forCallId callId: String) -> ParleyCall? { maps.current.callByCallID[callId] }

    /// The attached calls that have not ended (in no particular order).
    public var activeCalls: [ParleyCall] { maps.current.callByCallID.values.filter { $0.state != .ended } }

    /// The UUID of `callId`, if registered.
    public func uuid(forCallId callId: String) -> UUID? { maps.current.uuidByCallID[callId] }
    /// The call id of `uuid`, if registered.
    public func callId(for uuid: UUID) -> String? { maps.current.callIDByUUID[uuid] }
    /// How many calls are registered.
    public var count: Int { maps.current.uuidByCallID.count }

    /// Forgets `callId` and its UUID.
    public func remove(callId: String) {
        maps.withLock { maps in
            if let uuid = maps.uuidByCallID.removeValue(forKey: callId) { maps.callIDByUUID[uuid] = nil }
            maps.callByCallID[callId] = nil
        }
    }

    /// Forgets every call; returns what was registered.
    @discardableResult
    public func removeAll() -> [(uuid: UUID, callId: String)] {
        maps.withLock { maps in
            let all = maps.callIDByUUID.map { (uuid: $0.key, callId: $0.value) }
            maps = Maps()
            return all
        }
    }
}
