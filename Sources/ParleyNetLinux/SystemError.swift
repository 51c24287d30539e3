import Glibc
import ParleyNetCore

extension NetError {
    /// A system call failed with the calling thread's current errno. Here, next to the
    /// calls, because reading errno belongs to the code that made the call.
    static func lastSystemError(_ operation: String) -> NetError {
        system(operation, errno: Glibc.errno)
    }
}
