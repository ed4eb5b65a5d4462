/**
 * Named limits. Every length or count read from a file is checked against one of these before
 * it is used to size anything, so a corrupt or hostile file costs at most a bounded amount of
 * memory and time (CWE-770 / CWE-789 / CWE-190).
 */

/** Names are tensor keys (weight name + bias name); 16 KiB bounds each decoded string (CWE-770). */
export const MAX_NAME_LENGTH = 16 * 1024;

/** A model packs thousands of tensors, not millions; bounds the entries array (CWE-789). */
export const MAX_ENTRY_COUNT = 1_000_000;

/** The identity is "library version + ISA/tiling config"; 1 KiB is plenty (CWE-770). */
export const MAX_IDENTITY_LENGTH = 1024;

/** Offsets are JS numbers; beyond 2^53 - 1 they stop being exact (CWE-190, CWE-681). */
export const MAX_FILE_SIZE = Number.MAX_SAFE_INTEGER;

/** The whole trailer is read into memory before it is trusted; bounds that read (CWE-400). */
export const MAX_TRAILER_BYTES = 256 * 1024 * 1024;

/** Largest alignment `alignUp` accepts (1 GiB huge pages); keeps the arithmetic exact (CWE-190). */
export const MAX_PAGE_SIZE = 1024 * 1024 * 1024;
