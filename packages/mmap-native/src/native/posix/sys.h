// Thin wrappers over the POSIX calls the addon makes. Each returns 0 or an errno value
// and never touches JavaScript, so the objects/ layer owns all error reporting.
#ifndef MMAP_NATIVE_POSIX_SYS_H
#define MMAP_NATIVE_POSIX_SYS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace mmap_native {
namespace sys {

enum OpenMode : int32_t { kReadOnly = 0, kReadWrite = 1, kCreate = 2, kCreateExclusive = 3 };
enum LockKind : int32_t { kUnlock = 0, kShared = 1, kExclusive = 2 };
enum SyncMode : int32_t { kSyncBlocking = 0, kSyncAsync = 1, kSyncInvalidate = 2 };
enum Advice : int32_t {
  kAdviceNormal = 0,
  kAdviceSequential = 1,
  kAdviceRandom = 2,
  kAdviceWillNeed = 3,
  kAdviceDontNeed = 4,
};

size_t PageSize();

// Returned by Open() when the path names something other than a regular file.
constexpr int kNotRegularFile = -1;

// Opens without ever blocking (O_NONBLOCK, so a FIFO or a tty cannot hang the call), then
// accepts only a regular file (fstat of the open descriptor, so no check-then-open race)
// and clears O_NONBLOCK again. follow_symlinks=false: O_NOFOLLOW on the final component
// (a symlink there fails with ELOOP). *syscall names the call that failed.
int Open(const std::string& path, int32_t mode, uint32_t permissions, bool follow_symlinks,
         int* fd, const char** syscall);
int Close(int fd);
// fstat(2) fields, filled through statx(2) on Linux: glibc only exports fstat as a
// function since 2.33, statx since 2.28 (the oldest glibc Node 20 runs on), so the
// prebuilt addon loads on glibc 2.28 and later.
struct FileInfo {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime_ns = 0;
};

int Stat(int fd, FileInfo* out);
int Size(int fd, uint64_t* size);
// pread until `length` bytes or end of file; *done receives the count.
int ReadAt(int fd, uint8_t* target, size_t length, uint64_t position, size_t* done);
// A run of byte ranges written to the file one after another from `position`.
struct WriteRange {
  const uint8_t* data;
  size_t length;
};
// pwritev until every range is written, one call per aligned 512 KiB stretch, so a page
// cache with large folios (ext4, xfs) may hold each stretch as one folio, which a mapping
// then maps in one fault.
int WriteRangesAt(int fd, const WriteRange* ranges, size_t count, uint64_t position);
// WriteRangesAt of one range: all `length` bytes or an error.
int WriteAt(int fd, const uint8_t* source, size_t length, uint64_t position);
// Extends the file to new_size. sparse: ftruncate only (holes, no blocks). Otherwise the
// new tail [old size, new_size) gets real blocks, so ENOSPC/EFBIG surface here and not
// as a SIGBUS on first touch. *syscall names the call that failed.
int Grow(int fd, uint64_t new_size, bool sparse, const char** syscall);
// ftruncate(2) to exactly new_size: grows (a hole) or shrinks. Shrinking under someone's
// mapping is a SIGBUS for them when they touch the cut pages: callers cut only tails that
// nobody maps.
int Truncate(int fd, uint64_t new_size);
// A second descriptor of the same open file (F_DUPFD_CLOEXEC), for work on another thread
// that must not race a close() of the first.
int Duplicate(int fd, int* out);
int SyncFile(int fd, bool data_only);
// Starts writing [position, +length) back to disk without waiting for it (Linux
// sync_file_range SYNC_FILE_RANGE_WRITE), so a later fdatasync has less left to do.
// Advice: elsewhere, and on any error, nothing is done.
void StartWriteback(int fd, uint64_t position, size_t length);
int Lock(int fd, int32_t kind, bool wait);

// shared: MAP_SHARED with PROT_READ|PROT_WRITE. Otherwise MAP_PRIVATE with
// PROT_READ|PROT_WRITE: a stray write dirties a private copy-on-write page instead of
// faulting (PROT_READ alone would kill the process with SIGSEGV) or reaching the file.
int Map(int fd, uint64_t aligned_offset, size_t length, bool shared, void** out);
int Unmap(void* address, size_t length);
// Mappings made by Map() and not yet unmapped, in the whole process (all threads): each one
// is a kernel mapping that counts toward vm.max_map_count.
int64_t LiveMappings();
int SyncRange(void* aligned_address, size_t length, int32_t mode);
int AdviseRange(void* aligned_address, size_t length, int32_t advice);
// Faults the pages of [aligned_address, +length) in writable without writing to them
// (Linux 5.14+ MADV_POPULATE_WRITE): their bytes stay as they are, so another thread may
// write them meanwhile. ENOSYS on systems without it, EINVAL on kernels older than 5.14.
int PopulateWrite(void* aligned_address, size_t length);
// vec receives one byte per page; bit 0 set when the page is resident.
int Residency(void* aligned_address, size_t length, unsigned char* vec);

}  // namespace sys
}  // namespace mmap_native

#endif
