public import ParleyNetCore

/// A buffer the connections of one ``EventLoop`` share for reads: each read is delivered
/// before the next begins, so one buffer per loop suffices and an idle connection costs no
/// read buffer at all. Use it only on its loop.
public final class TCPReadBuffer {
    let storage: UnsafeMutableRawBufferPointer

    /// A buffer of `size` bytes (the most one read returns).
    public init(size: Int = 65536) {
        storage = .allocate(byteCount: max(size, 1024), alignment: 16)
    }

    deinit { storage.deallocate() }
}

/// A TCP connection driven by one ``EventLoop``: reads are handed to `onRead` as they
/// arrive, writes go through a queue flushed as the socket drains, with back-pressure.
///
/// Back-pressure: while more than `pauseReadingAbove` bytes wait to be written, the
/// connection stops reading (its peer's requests stay in the kernel, then in the peer),
/// and resumes once the queue falls under half of that. If the queue still grows past
/// `maxQueuedBytes` (the application keeps sending to a peer that does not read), the
/// connection is closed with ``NetError/isWriteQueueFull``: memory per connection stays
/// bounded.
///
/// Every method must be called on the connection's loop. The class is `@unchecked
/// Sendable` only so that other threads can carry a reference into ``EventLoop/execute(_:)``
/// closures; its state is touched on the loop thread alone.
public final class TCPConnection: @unchecked Sendable {
    /// Write queue limits and the linger time of a graceful close.
    public struct Configuration: Sendable, Hashable {
        /// Stop reading above this many queued bytes.
        public var pauseReadingAbove: Int
        /// Close the connection when the queue would exceed this.
        public var maxQueuedBytes: Int
        /// After a graceful close sent FIN, how long to wait for the peer's FIN before
        /// closing anyway (so a final response is not destroyed by a reset).
        public var lingerTimeout: Duration

        /// 256 KiB, 4 MiB, 2 s.
        public init(pauseReadingAbove: Int = 256 * 1024, maxQueuedBytes: Int = 4 * 1024 * 1024,
                    lingerTimeout: Duration = .seconds(2)) {
            self.pauseReadingAbove = pauseReadingAbove
            self.maxQueuedBytes = maxQueuedBytes
            self.lingerTimeout = lingerTimeout
        }
    }

    private enum State { case idle, open, draining, lingering, closed }

    /// The socket; owned by the connection from `start` on.
    public let socket: TCPSocket
    /// The loop every call and callback runs on.
    public let loop: EventLoop
    /// Limits given at creation.
    public let configuration: Configuration
    private let readBuffer: TCPReadBuffer
    private var state = State.idle
    private var queue: [[UInt8]] = []
    /// Bytes of `queue[0]` already written.
    private var headOffset = 0
    /// Bytes waiting in `queue`.
    public private(set) var queuedByteCount = 0
    /// Whether reading is paused by back-pressure (or by a graceful close).
    public private(set) var isReadingPaused = false
    private var wantsWritable = false
    private var onRead: ((UnsafeRawBufferPointer) -> Void)?
    private var onClose: ((NetError?) -> Void)?
    private var lingerTimer: TimerID?
    /// Set while `onRead` runs: writes then collect in `corked` (one send per read).
    private var inReadCallback = false
    private var corked: [UInt8] = []

    /// A connection over `socket`, not yet reading; call ``start(onRead:onClose:)`` on `loop`.
    public init(socket: TCPSocket, loop: EventLoop, readBuffer: TCPReadBuffer, configuration: Configuration = Configuration()) {
        self.socket = socket
        self.loop = loop
        self.readBuffer = readBuffer
        self.configuration = configuration
    }

    /// True until the connection closed.
    public var isOpen: Bool { state == .open }

    /// Registers with the loop and starts reading. `onRead` gets each chunk read (the
    /// bytes are valid only during the call); `onClose` runs once when the connection
    /// closes: nil for an orderly close (either side), an error otherwise.
    public func start(onRead: @escaping (UnsafeRawBufferPointer) -> Void, onClose: @escaping (NetError?) -> Void) throws(NetError) {
        precondition(loop.inEventLoop, "TCPConnection.start must run on its loop")
        guard state == .idle else { return }
        self.onRead = onRead
        self.onClose = onClose
        state = .open
        do {
            try loop.register(socket, closeOnShutdown: true,
                              onReadable: { [unowned self] in self.readable() },
                              onWritable: { [unowned self] in self.flush() })
        } catch {
            state = .closed
            socket.close()
            throw error
        }
        // The registration's closures keep the connection alive until it deregisters.
        retainedSelf = self
    }

    /// Holds the connection alive while registered (the loop's registration closures use
    /// `unowned` so that closing breaks the cycle deterministically).
    private var retainedSelf: TCPConnection?

    /// Queues `bytes` and writes what the socket takes now.
    /// - Returns: false if the connection is closed or closing, or the queue limit was hit
    ///   (the connection is then closed with ``NetError/isWriteQueueFull``).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        precondition(loop.inEventLoop, "TCPConnection.write must run on its loop")
        guard state == .open, !bytes.isEmpty else { return state == .open }
        guard bytes.count <= configuration.maxQueuedBytes - queuedByteCount - corked.count else {
            finish(.writeQueueFull(limit: configuration.maxQueuedBytes))
            return false
        }
        if inReadCallback {
            // Replies written while handling one read go out in one send after it.
            corked.append(contentsOf: bytes)
            return true
        }
        return send(bytes)
    }

    private func send(_ bytes: [UInt8]) -> Bool {
        if queue.isEmpty {
            // Fast path: write directly, queue only what the socket did not take.
            let written: Int
            do { written = try socket.write(bytes) } catch {
                finish(error)
                return false
            }
            if written == bytes.count { return true }
            queue.append(written == 0 ? bytes : Array(bytes[written...]))
            queuedByteCount = bytes.count - written
        } else {
            queue.append(bytes)
            queuedByteCount += bytes.count
        }
        updateInterest()
        return state == .open
    }

    /// Closes the connection. `graceful`: write what is queued first, then send FIN and
    /// wait (up to the linger timeout) for the peer's FIN; otherwise close at once.
    public func close(graceful: Bool = true) {
        precondition(loop.inEventLoop, "TCPConnection.close must run on its loop")
        switch state {
        case .idle:
            state = .closed
            socket.close()
        case .open:
            guard graceful else { finish(nil); return }
            state = .draining
            // Corked bytes go out when the read callback returns (`uncork`).
            if !corked.isEmpty { return }
            if queue.isEmpty { beginLinger() } else { updateInterest() }
        case .draining, .lingering:
            if !graceful { finish(nil) }
        case .closed:
            break
        }
    }

    // MARK: Loop callbacks

    private func readable() {
        // A few reads per wake-up, then let other connections have their turn.
        for _ in 0..<4 {
            guard state == .open || state == .lingering || state == .draining else { return }
            let result: TCPSocket.ReadResult
            do { result = try socket.read(into: readBuffer.storage) } catch {
                finish(error)
                return
            }
            switch result {
            case .bytes(let count):
                if state == .open {
                    inReadCallback = true
                    onRead?(UnsafeRawBufferPointer(rebasing: readBuffer.storage[0..<count]))
                    inReadCallback = false
                    uncork()
                }
                // While closing, input is read and dropped until the peer's FIN.
                if count < readBuffer.storage.count { return }
            case .wouldBlock:
                return
            case .endOfStream:
                finish(nil)
                return
            }
        }
    }

    private func uncork() {
        guard !corked.isEmpty else { return }
        let bytes = corked
        corked = []
        if state == .open || state == .draining {
            _ = send(bytes)
            if state == .draining && queue.isEmpty { beginLinger() }
        }
    }

    private func flush() {
        var turns = queue.count + 4
        while let first = queue.first, turns > 0 {
            turns -= 1
            let written: Int
            do { written = try socket.write(first, from: headOffset) } catch {
                finish(error)
                return
            }
            if written == 0 { break }
            queuedByteCount -= written
            headOffset += written
            if headOffset == first.count {
                queue.removeFirst()
                headOffset = 0
            }
        }
        if queue.isEmpty && state == .draining {
            beginLinger()
            return
        }
        updateInterest()
    }

    private func updateInterest() {
        guard state == .open || state == .draining else { return }
        let pause: Bool
        if state == .draining {
            pause = true
        } else if isReadingPaused {
            pause = queuedByteCount > configuration.pauseReadingAbove / 2
        } else {
            pause = queuedByteCount > configuration.pauseReadingAbove
        }
        let writable = !queue.isEmpty
        guard pause != isReadingPaused || writable != wantsWritable else { return }
        isReadingPaused = pause
        wantsWritable = writable
        do { try loop.setInterest(socket, readable: !pause, writable: writable) } catch { finish(error) }
    }

    private func beginLinger() {
        state = .lingering
        socket.shutdownWrite()
        isReadingPaused = false
        wantsWritable = false
        do { try loop.setInterest(socket, readable: true, writable: false) } catch {
            finish(nil)
            return
        }
        lingerTimer = loop.schedule(after: configuration.lingerTimeout) { [weak self] in
            // Timers run on the loop thread.
            self?.finishFromTimer()
        }
    }

    private func finishFromTimer() {
        lingerTimer = nil
        if state == .lingering { finish(nil) }
    }

    private func finish(_ error: NetError?) {
        guard state != .closed else { return }
        state = .closed
        if let lingerTimer { loop.cancel(lingerTimer) }
        loop.deregister(socket)
        socket.close()
        queue.removeAll()
        corked = []
        queuedByteCount = 0
        let onClose = self.onClose
        self.onRead = nil
        self.onClose = nil
        onClose?(error)
        retainedSelf = nil
    }
}
