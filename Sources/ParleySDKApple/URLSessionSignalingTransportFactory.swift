#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking  // URLSessionConfiguration on Linux
#else
public import Foundation
#endif
public import ParleySDKCore

/// Opens a `URLSessionSignalingTransport` per connection, all with one URLSession
/// configuration (nil: the transport's default).
public struct URLSessionSignalingTransportFactory: ParleySignalingTransportFactory, @unchecked Sendable {
    // @unchecked: the configuration is only read (copied by each URLSession made with it).
    private let configuration: URLSessionConfiguration?

    /// A factory whose transports use `configuration`.
    public init(configuration: URLSessionConfiguration? = nil) {
        self.configuration = configuration
    }

    public func makeTransport(endpoint: ParleyServerEndpoint,
                              handler: @escaping @Sendable (ParleySignalingTransportEvent) -> Void) -> any ParleySignalingTransport {
        URLSessionSignalingTransport(endpoint: endpoint, configuration: configuration, handler: handler)
    }
}
