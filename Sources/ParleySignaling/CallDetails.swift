public import ParleyCallModel
import ParleyWireCore

extension SignalingMessage {
    /// The times of a call (`call.ended`'s `details`), in integer milliseconds since the
    /// Unix epoch, read from the server's clock: the call model's `CallTimes`, which the
    /// call record and the store keep too. Names follow the SDK's `call.details`. On the
    /// wire `endedTime` is required (`call.ended` is sent once the call is over).
    public typealias CallDetails = CallTimes
}

extension CallTimes {
    /// Reads `details`; `startedTime` and `endedTime` are required.
    init(_ reader: FieldReader) throws(SignalingError) {
        self.init(
            startedTime: try reader.timeField("startedTime"),
            progressedTime: try reader.optionalTimeField("progressedTime"),
            rungTime: try reader.optionalTimeField("rungTime"),
            answeredTime: try reader.optionalTimeField("answeredTime"),
            establishedTime: try reader.optionalTimeField("establishedTime"),
            // The order of the times is not checked: they are wall-clock readings, and a
            // clock stepped back mid-call must not make a client drop the call's end.
            endedTime: try reader.timeField("endedTime"))
    }

    var json: JSONValue {
        var object = JSONObject()
        object.append("startedTime", startedTime)
        object.append("progressedTime", ifPresent: progressedTime)
        object.append("rungTime", ifPresent: rungTime)
        object.append("answeredTime", ifPresent: answeredTime)
        object.append("establishedTime", ifPresent: establishedTime)
        object.append("endedTime", ifPresent: endedTime)
        return .object(object)
    }
}
