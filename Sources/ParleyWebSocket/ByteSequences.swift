/// Fast paths for byte sequences handed across the module boundary.
///
/// Public entry points take `some Sequence<UInt8>` for convenience; called from another
/// module they run unspecialized, where copying element by element is slow. Arrays,
/// slices, Data and buffer pointers all offer contiguous storage, so copy through that.
extension Array where Element == UInt8 {
    /// Appends `bytes`, through their contiguous storage when they have one.
    mutating func appendBytes(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if done == nil { append(contentsOf: bytes) }
    }

    /// The bytes of any sequence as an array.
    init(bytes: some Sequence<UInt8>) {
        if let array = bytes as? [UInt8] {
            self = array
        } else {
            self = []
            appendBytes(bytes)
        }
    }
}
