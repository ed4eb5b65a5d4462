#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif

#include <algorithm>
#include <atomic>
#include <limits>

namespace mmap_native {
namespace sys {

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

int Open(const std::string& path, int32_t mode, uint32_t permissions, bool follow_symlinks,
         int* fd, const char** syscall) {
  *syscall = "open";
  int flags = O_CLOEXEC | O_NONBLOCK;
  switch (mode) {
    case kReadOnly: flags |= O_RDONLY; break;
    case kReadWrite: flags |= O_RDWR; break;
    case kCreate: flags |= O_RDWR | O_CREAT; break;
    case kCreateExclusive: flags |= O_RDWR | O_CREAT | O_EXCL; break;
    default: return EINVAL;
  }
  if (!follow_symlinks) flags |= O_NOFOLLOW;
  int result;
  do {
    result = open(path.c_str(), flags, static_cast<mode_t>(permissions));
  } while (result < 0 && errno == EINTR);
  if (result < 0) return errno;
  FileInfo info;
  int err = Stat(result, &info);
  if (err != 0) {
    *syscall = "fstat";
  } else if (!S_ISREG(info.mode)) {
    err = kNotRegularFile;
  } else {
    const int status = fcntl(result, F_GETFL);
    if (status == -1 || fcntl(result, F_SETFL, status & ~O_NONBLOCK) == -1) {
      err = errno;
      *syscall = "fcntl";
    }
  }
  if (err != 0) {
    close(result);
    return err;
  }
  *fd = result;
  return 0;
}

int Close(int fd) {
  // No retry on EINTR: the descriptor is released either way on Linux and macOS.
  if (close(fd) != 0 && errno != EINTR) return errno;
  return 0;
}

int Stat(int fd, FileInfo* out) {
#if defined(__linux__)
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS, &stx) != 0) {
    return errno;
  }
  out->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  out->ino = stx.stx_ino;
  out->size = stx.stx_size;
  out->mode = stx.stx_mode;
  out->uid = stx.stx_uid;
  out->gid = stx.stx_gid;
  out->mtime_ns = static_cast<int64_t>(stx.stx_mtime.tv_sec) * 1000000000 + stx.stx_mtime.tv_nsec;
#else
  struct stat st;
  if (fstat(fd, &st) != 0) return errno;
  out->dev = static_cast<uint64_t>(st.st_dev);
  out->ino = static_cast<uint64_t>(st.st_ino);
  out->size = static_cast<uint64_t>(st.st_size);
  out->mode = static_cast<uint32_t>(st.st_mode);
  out->uid = static_cast<uint32_t>(st.st_uid);
  out->gid = static_cast<uint32_t>(st.st_gid);
#if defined(__APPLE__)
  const struct timespec& mtime = st.st_mtimespec;
#else
  const struct timespec& mtime = st.st_mtim;
#endif
  out->mtime_ns = static_cast<int64_t>(mtime.tv_sec) * 1000000000 + mtime.tv_nsec;
#endif
  return 0;
}

int Size(int fd, uint64_t* size) {
  FileInfo info;
  if (int err = Stat(fd, &info)) return err;
  *size = info.size;
  return 0;
}

int ReadAt(int fd, uint8_t* target, size_t length, uint64_t position, size_t* done) {
  *done = 0;
  while (*done < length) {
    // Linux transfers at most 0x7ffff000 bytes per call; a short count just loops.
    ssize_t n = pread(fd, target + *done, length - *done, static_cast<off_t>(position + *done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;  // end of file
    *done += static_cast<size_t>(n);
  }
  return 0;
}

// The largest aligned stretch one write call covers. A write of a whole aligned 512 KiB
// becomes one 512 KiB folio in a page cache with large folios (ext4 from Linux 6.16, xfs),
// which a mapping maps in one fault instead of 32: touching a 64 MiB mapping of such a
// file took 1.4 ms instead of 5-10 ms (Linux 6.18, ext4). Whole 1 MiB or 2 MiB writes make
// larger folios, but allocating them made writing 1 GiB take up to 2-5x the system time.
constexpr size_t kWriteStretch = 512 * 1024;

int WriteRangesAt(int fd, const WriteRange* ranges, size_t count, uint64_t position) {
  // At most IOV_MAX ranges per call; a short write resumes inside the range it stopped in.
  constexpr size_t kMaxRanges = 1024;
  struct iovec iov[kMaxRanges];
  size_t next = 0;   // first range not wholly written
  size_t skip = 0;   // bytes of ranges[next] already written
  for (;;) {
    // Ranges written whole (empty ones too) are passed over: a call never writes nothing.
    while (next < count && ranges[next].length == skip) {
      next++;
      skip = 0;
    }
    if (next == count) return 0;
    // One call ends at the next stretch boundary: the page cache then makes one folio of
    // each aligned stretch it is given whole.
    size_t room = kWriteStretch - static_cast<size_t>(position % kWriteStretch);
    size_t n = 0;
    for (size_t i = next; i < count && n < kMaxRanges && room > 0; i++, n++) {
      size_t from = i == next ? skip : 0;
      size_t length = std::min(ranges[i].length - from, room);
      iov[n].iov_base = const_cast<uint8_t*>(ranges[i].data + from);
      iov[n].iov_len = length;
      room -= length;
    }
    ssize_t written = pwritev(fd, iov, static_cast<int>(n), static_cast<off_t>(position));
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (written == 0) return EIO;  // no progress: never spin
    position += static_cast<uint64_t>(written);
    size_t left = static_cast<size_t>(written);
    while (next < count && left >= ranges[next].length - skip) {
      left -= ranges[next].length - skip;
      skip = 0;
      next++;
    }
    skip += left;
  }
}

int WriteAt(int fd, const uint8_t* source, size_t length, uint64_t position) {
  const WriteRange range{source, length};
  return WriteRangesAt(fd, &range, 1, position);
}

namespace {

std::atomic<int64_t> live_mappings{0};

int Allocate(int fd, uint64_t offset, uint64_t length, const char** syscall) {
#if defined(__APPLE__)
  // macOS has no posix_fallocate: preallocate (contiguous first), then set the size.
  *syscall = "fcntl";
  fstore_t store = {F_ALLOCATECONTIG | F_ALLOCATEALL, F_PEOFPOSMODE, 0,
                    static_cast<off_t>(length), 0};
  if (fcntl(fd, F_PREALLOCATE, &store) == -1) {
    store.fst_flags = F_ALLOCATEALL;
    if (fcntl(fd, F_PREALLOCATE, &store) == -1) return errno;
  }
  *syscall = "ftruncate";
  return Truncate(fd, offset + length);
#else
  *syscall = "posix_fallocate";
  int result;
  do {
    // posix_fallocate returns the error number instead of setting errno.
    result = posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (result == EINTR);
  return result;
#endif
}

}  // namespace

int Truncate(int fd, uint64_t size) {
  if (size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) return EFBIG;
  int result;
  do {
    result = ftruncate(fd, static_cast<off_t>(size));
  } while (result != 0 && errno == EINTR);
  return result == 0 ? 0 : errno;
}

int Duplicate(int fd, int* out) {
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return errno;
  *out = copy;
  return 0;
}

int Grow(int fd, uint64_t new_size, bool sparse, const char** syscall) {
  *syscall = "fstat";
  uint64_t current = 0;
  if (int err = Size(fd, &current)) return err;
  if (new_size <= current) return 0;  // never shrinks: truncating under a map is a SIGBUS
  if (new_size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) return EFBIG;
  if (sparse) {
    *syscall = "ftruncate";
    return Truncate(fd, new_size);
  }
  return Allocate(fd, current, new_size - current, syscall);
}

int SyncFile(int fd, bool data_only) {
  int result;
  do {
#if defined(__APPLE__)
    (void)data_only;
    result = fsync(fd);  // macOS has no fdatasync in its public headers
#else
    result = data_only ? fdatasync(fd) : fsync(fd);
#endif
  } while (result != 0 && errno == EINTR);
  return result == 0 ? 0 : errno;
}

void StartWriteback(int fd, uint64_t position, size_t length) {
#if defined(__linux__)
  sync_file_range(fd, static_cast<off_t>(position), static_cast<off_t>(length),
                  SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
  (void)position;
  (void)length;
#endif
}

int Lock(int fd, int32_t kind, bool wait) {
  int operation;
  switch (kind) {
    case kUnlock: operation = LOCK_UN; break;
    case kShared: operation = LOCK_SH; break;
    case kExclusive: operation = LOCK_EX; break;
    default: return EINVAL;
  }
  if (!wait) operation |= LOCK_NB;
  int result;
  do {
    result = flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result == 0 ? 0 : errno;
}

int Map(int fd, uint64_t aligned_offset, size_t length, bool shared, void** out) {
  void* address = mmap(nullptr, length, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE,
                       fd, static_cast<off_t>(aligned_offset));
  if (address == MAP_FAILED) return errno;
  live_mappings.fetch_add(1, std::memory_order_relaxed);
  *out = address;
  return 0;
}

int Unmap(void* address, size_t length) {
  if (munmap(address, length) != 0) return errno;
  live_mappings.fetch_sub(1, std::memory_order_relaxed);
  return 0;
}

int64_t LiveMappings() { return live_mappings.load(std::memory_order_relaxed); }

int SyncRange(void* aligned_address, size_t length, int32_t mode) {
  int flags;
  switch (mode) {
    case kSyncBlocking: flags = MS_SYNC; break;
    case kSyncAsync: flags = MS_ASYNC; break;
    case kSyncInvalidate: flags = MS_INVALIDATE; break;
    default: return EINVAL;
  }
  return msync(aligned_address, length, flags) == 0 ? 0 : errno;
}

int AdviseRange(void* aligned_address, size_t length, int32_t advice) {
  int value;
  switch (advice) {
    case kAdviceNormal: value = MADV_NORMAL; break;
    case kAdviceSequential: value = MADV_SEQUENTIAL; break;
    case kAdviceRandom: value = MADV_RANDOM; break;
    case kAdviceWillNeed: value = MADV_WILLNEED; break;
    case kAdviceDontNeed: value = MADV_DONTNEED; break;
    default: return EINVAL;
  }
  return madvise(aligned_address, length, value) == 0 ? 0 : errno;
}

int PopulateWrite(void* aligned_address, size_t length) {
#if defined(__linux__)
// Linux's value since 5.14 (include/uapi/asm-generic/mman-common.h); older C headers lack it.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  int result;
  do {
    result = madvise(aligned_address, length, MADV_POPULATE_WRITE);
  } while (result != 0 && errno == EINTR);
  return result == 0 ? 0 : errno;
#else
  (void)aligned_address;
  (void)length;
  return ENOSYS;
#endif
}

int Residency(void* aligned_address, size_t length, unsigned char* vec) {
#if defined(__APPLE__)
  return mincore(aligned_address, length, reinterpret_cast<char*>(vec)) == 0 ? 0 : errno;
#else
  return mincore(aligned_address, length, vec) == 0 ? 0 : errno;
#endif
}

}  // namespace sys
}  // namespace mmap_native
