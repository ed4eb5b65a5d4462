// An XNNGraph read by @memlayer/mmap-native's addon: the checks and columns of the
// JavaScript reader in xnn-graph.ts, about ten times faster on a cold start (the JavaScript
// one runs interpreted then), and each constant's key a slice of one string.
import type { XnnGraphReader } from '@memlayer/mmap-native';
import { FlatBuffer, type Malformed } from './flatbuffer.js';
import { type ConstantEntries, constantEntries } from './xnn-constants.js';
import type { XnnGraph } from './xnn-graph.js';

/** The graph of the XNNGraph flatbuffer `graphBytes`; `constants` is the payload's constant data. */
export function readXnnGraphNatively(
  reader: XnnGraphReader,
  graphBytes: Uint8Array,
  constants: Uint8Array,
  malformed: Malformed,
): XnnGraph {
  const columns = reader.read(graphBytes);
  if (typeof columns === 'string') return malformed(columns);
  const { namedKey, inputIds, outputIds, constantCount, ...rest } = columns;
  // Constants' bytes, and keys the addon left to us, are read in JavaScript as
  // xnn-graph.ts reads them; made on first use, which a warm start may never reach.
  let entries: ConstantEntries | undefined;
  const inJavaScript = (): ConstantEntries => {
    if (entries === undefined) {
      const fb = new FlatBuffer(graphBytes, malformed);
      entries = constantEntries(fb, fb.root('XNNGraph'), constants, malformed);
    }
    return entries;
  };
  return {
    ...rest,
    nodeCount: rest.nodeType.length,
    valueCount: rest.datatype.length,
    inputIds: Array.from(inputIds),
    outputIds: Array.from(outputIds),
    constantCount,
    constantKey: (index) => {
      if (!(index >= 0 && index < constantCount))
        malformed(`constant ${index} of ${constantCount}`);
      const key = namedKey(index);
      return key === undefined ? inJavaScript().key(index) : key;
    },
    constantBytes: (index) => inJavaScript().bytes(index),
  };
}
