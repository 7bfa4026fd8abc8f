/// Counts this process's open file descriptors (the entries of `/proc/self/fd`), for leak tests.
public enum OpenFileDescriptors {
    /// The number of descriptors open right now.
    ///
    /// - Throws: ``SystemCallError`` when `/proc/self/fd` cannot be read (no procfs).
    public static func count() throws -> Int {
        try Syscall.countOpenDescriptors()
    }
}
