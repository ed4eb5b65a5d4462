// Import time of this package (its built dist/) in fresh processes, side by side with
// another package's require (onnxruntime-node, when given), interleaved run by run; medians.
// Each child times only its own import or require, not Node's start.
// Run (after a build): node bench/import-time.mjs [--runs 21] [--peer <path to onnxruntime-node>]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const argument = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const runs = Number(argument('--runs', '21'));
const peer = argument('--peer', undefined);
const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));

const cases = [
  {
    name: 'import @memlayer/module-loader',
    args: [
      '--input-type=module',
      '-e',
      `const t = performance.now(); await import(${JSON.stringify(entry)}); console.log(performance.now() - t);`,
    ],
  },
];
if (peer !== undefined) {
  cases.push({
    name: 'require onnxruntime-node',
    args: [
      '-e',
      `const t = performance.now(); require(${JSON.stringify(peer)}); console.log(performance.now() - t);`,
    ],
  });
}

const times = cases.map(() => []);
for (let run = 0; run < runs; run++) {
  cases.forEach(({ name, args }, index) => {
    const child = spawnSync(process.execPath, args, { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`${name} failed: ${child.stderr}`);
    times[index].push(Number(child.stdout.trim()));
  });
}
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
const medians = times.map(median);
console.log(`median of ${runs} fresh processes each (ms), Node ${process.version}`);
cases.forEach(({ name }, index) => {
  const ratio =
    index === 0 ? '' : `  (module-loader: ${(medians[0] / medians[index]).toFixed(2)}x)`;
  console.log(`${name.padEnd(32)} ${medians[index].toFixed(1).padStart(6)}${ratio}`);
});
