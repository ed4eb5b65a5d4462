import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { liveMappingCount, openMappedFile, pageSize } from '@memlayer/mmap-native';

const path = join(tmpdir(), 'mmap-native-example.bin');
// Created if missing, never truncated; a symlink at `path` is refused (ELOOP).
const file = openMappedFile(path, { mode: 'w+', followSymlinks: false });
try {
  file.lock('exclusive', { timeoutMs: 5000 }); // flock(2), waits at most 5 s
  file.grow(16 * pageSize()); // real blocks: a full disk throws ENOSPC here
  const mapping = file.map(0, 4 * pageSize()); // MAP_SHARED, read-write
  try {
    mapping.bytes().set([1, 2, 3]);
    mapping.sync(); // msync(MS_SYNC): the bytes are in the file
    console.log(file.read(0, 3)); // pread on the same descriptor: Uint8Array(3) [ 1, 2, 3 ]
    console.log(file.stat().size, liveMappingCount()); // 65536 1 (with 4 KiB pages)
  } finally {
    mapping.close(); // munmap, and every view of mapping.buffer now has byteLength 0
  }
} finally {
  file.close(); // closes the descriptor and drops the lock
}
