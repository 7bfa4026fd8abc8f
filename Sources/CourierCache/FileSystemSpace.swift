internal import CourierCore

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// The size of the file system holding the store and the space an unprivileged writer may still use.
package struct FileSystemSpace: Hashable, Sendable {
    /// Bytes in the file system (`f_blocks × f_frsize`).
    package var totalBytes: Int64
    /// Bytes available to an unprivileged writer (`f_bavail × f_frsize`).
    package var freeBytes: Int64

    /// Creates the figures directly (tests, plans).
    package init(totalBytes: Int64, freeBytes: Int64) {
        self.totalBytes = totalBytes
        self.freeBytes = freeBytes
    }

    /// `statvfs(3)` of the file system holding `path`.
    static func of(_ path: String) throws(SystemCallError) -> FileSystemSpace {
        var info = statvfs()
        _ = try SystemCall.blocking("statvfs") { statvfs(path, &info) }
        let unit = Int64(info.f_frsize)
        return FileSystemSpace(
            totalBytes: Int64(clamping: UInt64(info.f_blocks)).multipliedReportingOverflow(by: unit).partialValue,
            freeBytes: Int64(clamping: UInt64(info.f_bavail)).multipliedReportingOverflow(by: unit).partialValue
        )
    }
}
