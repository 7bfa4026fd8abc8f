internal import CCourierPosix
internal import CourierCore

#if canImport(Glibc)
internal import Glibc
#endif

/// One version of a record file: its device, inode, size and birth time. A store replaces a record by renaming
/// a new file into place (a new inode, born now), while access times and lock counts are written in place (the
/// same inode and birth time), so the fingerprint changes exactly when the record's content may have: a memory
/// copy with the file's current fingerprint is the file's content, whichever process wrote it.
///
/// Only file systems that record birth times give one (statx(2) `STATX_BTIME`: ext4, xfs, btrfs, tmpfs on recent
/// kernels); elsewhere the fingerprint of a file (`RecordFingerprint.of(path:)`, internal) is nil, and a caller must read the file.
package struct RecordFingerprint: Hashable, Sendable {
    /// The file system's device number.
    package var device: UInt64
    /// The file's inode number.
    package var inode: UInt64
    /// The file's size in bytes.
    package var size: UInt64
    /// The file's birth time: seconds since the Unix epoch.
    package var birthSeconds: Int64
    /// The file's birth time: nanoseconds within the second.
    package var birthNanoseconds: UInt32

    /// A fingerprint with the given fields (as `statx(2)` reports them).
    package init(device: UInt64, inode: UInt64, size: UInt64, birthSeconds: Int64, birthNanoseconds: UInt32) {
        self.device = device
        self.inode = inode
        self.size = size
        self.birthSeconds = birthSeconds
        self.birthNanoseconds = birthNanoseconds
    }

    /// The fingerprint of the file at `path`; nil when there is none (`ENOENT`) or the file system records no
    /// birth time.
    static func of(path: String) throws(SystemCallError) -> RecordFingerprint? {
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var size: UInt64 = 0
        var seconds: Int64 = 0
        var nanoseconds: UInt32 = 0
        var hasBirth: Int32 = 0
        do {
            _ = try SystemCall.blocking("statx") {
                CCourierPosix_fileIdentity(AT_FDCWD, path, 0, &device, &inode, &size, &seconds, &nanoseconds, &hasBirth)
            }
        } catch where error.errno == ENOENT || error.errno == ENOTDIR {
            return nil
        }
        guard hasBirth != 0 else { return nil }
        return RecordFingerprint(device: device, inode: inode, size: size, birthSeconds: seconds, birthNanoseconds: nanoseconds)
    }
}

/// Where a record's file is (see ``RecordStore/location(of:)``): kept by a caller that checks the same record's
/// ``RecordFingerprint`` often, so that it does not hash the key each time.
package struct RecordLocation: Hashable, Sendable {
    let path: String
}
