// Writes a one-entry v3 cache file with the writer protocol, then reads it back.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  alignUp,
  COMMIT_SLOT_OFFSETS,
  commitSlotForTrailer,
  crc32cOf,
  DEFAULT_PAGE_SIZE,
  decodeHeader,
  describeFileLayout,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
  planCommit,
  readTrailer,
  V3_HEADER_SIZE,
  verifyEntryData,
} from '@memlayer/cache-format';

const dir = fs.mkdtempSync(join(tmpdir(), 'xpwc-example-'));
const path = join(dir, 'weights.xpwc');
const identity = 'example-packer 1.0 / x86_64-avx2';

// A new file starts with the 4096-byte header (both commit slots empty).
const header = encodeHeader({ pageSize: DEFAULT_PAGE_SIZE });
const plan = planCommit(decodeHeader(header).slots, null);
// One packed region after the header, then the trailer on the next page boundary.
const data = new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer);
const entry = {
  name: 'fc1.weightfc1.bias',
  fileOffset: V3_HEADER_SIZE,
  dataSize: data.length,
  seed: 0x5eed,
  fingerprint: 0,
  crc32c: crc32cOf(data),
  layout: {
    operatorType: 63,
    outputChannels: 2,
    inputChannels: 4,
    nr: 8,
    kr: 1,
    sr: 1,
    extraBytes: 0,
    flags: 0,
  },
};
const indexStart = alignUp(entry.fileOffset + data.length, DEFAULT_PAGE_SIZE);
const trailer = encodeTrailer([entry], { indexStart, identity, generation: plan.generation });
const slot = encodeCommitSlot(commitSlotForTrailer(trailer), plan.slotIndex);

// data durable -> trailer durable -> commit slot durable.
const fd = fs.openSync(path, 'w+', 0o600);
fs.writeSync(fd, header, 0, header.length, 0);
fs.writeSync(fd, data, 0, data.length, entry.fileOffset);
fs.writeSync(fd, trailer, 0, trailer.length, indexStart);
fs.fsyncSync(fd);
fs.writeSync(fd, slot, 0, slot.length, COMMIT_SLOT_OFFSETS[plan.slotIndex]);
fs.fsyncSync(fd);
fs.closeSync(fd);

// Read it back: any readable version; v3 through its commit slots.
const file = fs.readFileSync(path);
const loaded = readTrailer(file, file.length, { expectedIdentity: identity });
// A file may be v2 (no checksums, layouts or generation): narrow on the version.
if (loaded.trailer.version !== 3) throw new Error(`expected v3, read v${loaded.trailer.version}`);
for (const e of loaded.trailer.entries) {
  verifyEntryData(e, file.subarray(e.fileOffset, e.fileOffset + e.dataSize)); // throws ERR_XPWC_CHECKSUM
  console.log(
    `${e.name}: ${e.dataSize} bytes at ${e.fileOffset}, nc=${e.layout?.outputChannels} kc=${e.layout?.inputChannels}`,
  );
}
const layout = describeFileLayout({
  fileSize: file.length,
  trailer: loaded.trailer,
  pageSize: loaded.commit?.header.pageSize,
});
console.log(
  `generation ${loaded.trailer.generation}: ${layout.liveBytes} live bytes, ${layout.orphanBytes} orphan bytes`,
);
fs.rmSync(dir, { recursive: true });
