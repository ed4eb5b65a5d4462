import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DeviceRunnerError,
  elfBuildId64,
  fnv1a64,
  loadOrchestration,
  parseSharedObject,
  readGnuBuildId,
  writeSharedObject,
} from '../src/index.js';
import { errorCode } from './support/callables.js';

const id = Uint8Array.from({ length: 20 }, (_, i) => i + 1);
const symbols = [
  { name: 'aicpu_orchestration_entry', value: 0x1234n },
  { name: 'my_config', value: 0x5678n, type: 1 },
  { name: 'imported', defined: false },
  { name: 'hidden_local', binding: 0 },
];

describe('elf_build_id_64', () => {
  it('reads the first 8 bytes of the GNU build id as little-endian', () => {
    const so = writeSharedObject({ symbols, buildId: id });
    expect(elfBuildId64(so)).toBe(0x0807060504030201n);
    expect([...(readGnuBuildId(so) ?? [])]).toEqual([...id]);
  });

  it('falls back to FNV-1a of the input when there is no usable note', () => {
    const noNote = writeSharedObject({ symbols, buildId: null });
    expect(elfBuildId64(noNote)).toBe(fnv1a64(noNote));
    const shortDesc = writeSharedObject({ symbols, buildId: Uint8Array.of(1, 2, 3, 4) });
    expect(elfBuildId64(shortDesc)).toBe(fnv1a64(shortDesc));
    const short = Uint8Array.of(0x7f, 0x45, 0x4c, 0x46, 0xaa, 0xbb);
    expect(elfBuildId64(short)).toBe(0xa40820e153aa1f80n);
    const elf32 = writeSharedObject({ symbols, buildId: id });
    elf32[4] = 1;
    expect(elfBuildId64(elf32)).toBe(fnv1a64(elf32));
    const badPhdrs = writeSharedObject({ symbols, buildId: id });
    new DataView(badPhdrs.buffer).setBigUint64(32, 1n << 40n, true);
    expect(elfBuildId64(badPhdrs)).toBe(fnv1a64(badPhdrs));
  });

  it('stops at a note that would overrun its segment', () => {
    const so = writeSharedObject({ symbols, buildId: id });
    // Find the PT_NOTE (third program header) and claim a desc longer than the segment.
    const view = new DataView(so.buffer);
    const noteOffset = Number(view.getBigUint64(64 + 2 * 56 + 8, true));
    view.setUint32(noteOffset + 4, 4096, true);
    expect(readGnuBuildId(so)).toBeNull();
    expect(elfBuildId64(so)).toBe(fnv1a64(so));
  });

  it('never throws on random or mutated input', () => {
    const so = writeSharedObject({ symbols, buildId: id });
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(so.length - 1), value: fc.nat(255) }), { maxLength: 8 }),
        (edits) => {
          const bytes = so.slice();
          for (const { at, value } of edits) bytes[at] = value;
          expect(typeof elfBuildId64(bytes)).toBe('bigint');
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('parseSharedObject', () => {
  it.each(['sysv', 'gnu', 'sections'] as const)(
    'resolves symbols with the count from %s',
    (hashStyle) => {
      const so = writeSharedObject({ symbols, hashStyle });
      const info = parseSharedObject(so);
      expect(info.symbolCountSource).toBe(
        { sysv: 'DT_HASH', gnu: 'DT_GNU_HASH', sections: 'SHT_DYNSYM' }[hashStyle],
      );
      expect(info.symbols.map((s) => s.name)).toEqual(['', ...symbols.map((s) => s.name)]);
      expect(info.lookup('aicpu_orchestration_entry')?.value).toBe(0x1234n);
      expect(info.lookup('my_config')?.value).toBe(0x5678n);
      // Undefined and local symbols are not what dlsym returns.
      expect(info.lookup('imported')).toBeUndefined();
      expect(info.lookup('hidden_local')).toBeUndefined();
    },
  );

  it('loadOrchestration resolves func_name, the default entry and the optional config', () => {
    const so = writeSharedObject({ symbols });
    expect(loadOrchestration(so, '', 'my_config')).toMatchObject({
      entrySymbol: 'aicpu_orchestration_entry',
      entryAddress: 0x1234n,
      configAddress: 0x5678n,
    });
    expect(loadOrchestration(so, '', 'absent_config').configAddress).toBeNull();
    expect(errorCode(() => loadOrchestration(so, 'missing_fn', ''))).toBe(
      'ERR_ELF_SYMBOL_NOT_FOUND',
    );
    // An OBJECT is not a callable entry.
    expect(errorCode(() => loadOrchestration(so, 'my_config', ''))).toBe(
      'ERR_ELF_SYMBOL_NOT_FOUND',
    );
  });

  it('rejects non-shared objects and malformed headers with stable codes', () => {
    expect(errorCode(() => parseSharedObject(writeSharedObject({ symbols, type: 2 })))).toBe(
      'ERR_ELF_NOT_SHARED_OBJECT',
    );
    expect(errorCode(() => parseSharedObject(Uint8Array.of(0x7f, 0x45, 0x4c, 0x46)))).toBe(
      'ERR_ELF_INVALID',
    );
    expect(
      errorCode(() => parseSharedObject(new TextEncoder().encode('#!/bin/sh\n'.repeat(10)))),
    ).toBe('ERR_ELF_INVALID');
    const noDynamic = writeSharedObject({ symbols });
    new DataView(noDynamic.buffer).setUint32(64 + 56, 6, true); // PT_DYNAMIC -> PT_PHDR
    expect(errorCode(() => parseSharedObject(noDynamic))).toBe('ERR_ELF_NOT_SHARED_OBJECT');
    const hugeCount = writeSharedObject({ symbols });
    const view = new DataView(hugeCount.buffer);
    const hashOffset = Number(
      view.getBigUint64(Number(view.getBigUint64(64 + 56 + 8, true)) + 8, true),
    );
    view.setUint32(hashOffset + 4, 0x7fffffff, true);
    expect(errorCode(() => parseSharedObject(hugeCount))).toBe('ERR_ELF_LIMIT_EXCEEDED');
  });

  it('only DeviceRunnerError escapes on mutated objects (fuzz)', () => {
    const originals = (['sysv', 'gnu', 'sections'] as const).map((hashStyle) =>
      writeSharedObject({ symbols, hashStyle, buildId: id }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...originals),
        fc.array(fc.record({ at: fc.nat(4095), value: fc.nat(255) }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.nat(4096),
        (original, edits, cut) => {
          const bytes = original.slice(0, Math.max(64, Math.min(cut, original.length)));
          for (const { at, value } of edits) if (at < bytes.length) bytes[at] = value;
          try {
            loadOrchestration(bytes, '', 'my_config');
          } catch (error) {
            expect(error).toBeInstanceOf(DeviceRunnerError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
