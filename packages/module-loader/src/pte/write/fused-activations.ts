import type { GraphMethodManifest } from '../../program/manifest.js';

/**
 * Which relu nodes fold into the linear node before them: index of the relu → index of the
 * linear. As backends/xnnpack/_passes/fuse_activation_pass.py does, a relu fuses when its
 * input is a linear's output that nothing else reads (a method output counts as a reader).
 */
export function reluFusions(method: GraphMethodManifest): Map<number, number> {
  const readers = new Map<string, number>();
  const read = (value: string) => readers.set(value, (readers.get(value) ?? 0) + 1);
  for (const node of method.graph) read(node.input);
  for (const output of method.outputs) read(output);
  const linearOf = new Map<string, number>();
  method.graph.forEach((node, index) => {
    if (node.op === 'linear') linearOf.set(node.output, index);
  });
  const fusions = new Map<number, number>();
  method.graph.forEach((node, index) => {
    if (node.op !== 'relu') return;
    const linear = linearOf.get(node.input);
    if (linear !== undefined && readers.get(node.input) === 1) fusions.set(index, linear);
  });
  return fusions;
}
