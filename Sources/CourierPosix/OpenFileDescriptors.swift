/// Counts this process's open file descriptors (the entries of `/proc/self/fd`), for leak tests.
package enum OpenFileDescriptors {
    /// The number of descriptors open right now.
    ///
    /// - Throws: ``SystemCallError`` when `/proc/self/fd` cannot be read (no procfs).
    package static func count() throws -> Int {
        try Syscall.countOpenDescriptors(notOnDisk: false)
    }

    /// The number of descriptors open right now that are not files or directories on disk: sockets, pipes, epoll
    /// and event descriptors. What a transport leak test counts: it does not move when other work in the process
    /// (a record store's lock files, a test writing fixtures) opens and closes files meanwhile.
    ///
    /// - Throws: ``SystemCallError`` when `/proc/self/fd` cannot be read (no procfs).
    package static func countNotOnDisk() throws -> Int {
        try Syscall.countOpenDescriptors(notOnDisk: true)
    }
}
