// What materializing a method's graph costs in a fresh process, whatever it is encoded in:
//   node bench/graph-encodings.mjs <program.json> [rounds] [method]
// Writes the method's graph twice more into a temp folder (V8's serializer; a columnar text:
// one op letter per node, then every name on its own line), then runs `rounds` rounds of one
// fresh process per encoding (the order turns each round). Each child reads its file and
// makes one object per node with its names (what parseManifest hands on, without checks)
// and prints its in-process milliseconds. Prints the median of each encoding.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';

const [, script, programPath, roundsArg = '9', method = 'forward', child] = process.argv;

if (child !== undefined) {
  process.stdout.write(`${materialize(child, programPath)}\n`);
} else if (programPath === undefined) {
  console.error('usage: node bench/graph-encodings.mjs <program.json> [rounds] [method]');
  process.exit(2);
} else {
  compare(programPath, Number(roundsArg), method);
}

/** The child: read `path` in `encoding`, make the node objects, return the milliseconds. */
function materialize(encoding, path) {
  const start = performance.now();
  let nodes;
  if (encoding === 'json') {
    const program = JSON.parse(new TextDecoder().decode(readFileSync(path)));
    nodes = Object.values(program.methods)[0].graph;
  } else if (encoding === 'v8') {
    nodes = deserialize(readFileSync(path));
  } else {
    nodes = columnarGraph(new TextDecoder().decode(readFileSync(path)));
  }
  const ms = performance.now() - start;
  if (!Array.isArray(nodes) || nodes.length === 0) throw new Error(`no graph in ${path}`);
  return ms.toFixed(2);
}

/** Op letters on the first line (b: linear with bias, l: linear, r: relu, g: gelu), then names. */
function columnarGraph(text) {
  const end = text.indexOf('\n');
  const ops = text.slice(0, end);
  const names = text.slice(end + 1).split('\n');
  const graph = new Array(ops.length);
  let k = 0;
  for (let i = 0; i < ops.length; i++) {
    const op = ops.charCodeAt(i);
    if (op === 98) {
      graph[i] = {
        op: 'linear',
        input: names[k++],
        output: names[k++],
        weight: names[k++],
        bias: names[k++],
      };
    } else if (op === 108) {
      graph[i] = { op: 'linear', input: names[k++], output: names[k++], weight: names[k++] };
    } else {
      graph[i] = { op: op === 114 ? 'relu' : 'gelu', input: names[k++], output: names[k++] };
    }
  }
  return graph;
}

function columnarText(graph) {
  const letters = graph.map((node) =>
    node.op === 'linear' ? (node.bias === undefined ? 'l' : 'b') : node.op[0],
  );
  const names = [];
  for (const node of graph) {
    names.push(node.input, node.output);
    if (node.op === 'linear') names.push(node.weight);
    if (node.bias !== undefined) names.push(node.bias);
  }
  return `${letters.join('')}\n${names.join('\n')}`;
}

function compare(programPath, rounds, methodName) {
  const program = JSON.parse(readFileSync(programPath, 'utf8'));
  const graph = program.methods?.[methodName]?.graph;
  if (!Array.isArray(graph)) throw new Error(`${programPath} has no graph method "${methodName}"`);
  const dir = mkdtempSync(join(tmpdir(), 'graph-encodings-'));
  try {
    const only = { ...program, methods: { [methodName]: program.methods[methodName] } };
    const files = {
      json: join(dir, 'program.json'),
      v8: join(dir, 'graph.v8'),
      columns: join(dir, 'graph.txt'),
    };
    writeFileSync(files.json, JSON.stringify(only));
    writeFileSync(files.v8, serialize(graph));
    writeFileSync(files.columns, columnarText(graph));
    const encodings = Object.keys(files);
    const times = Object.fromEntries(encodings.map((encoding) => [encoding, []]));
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < encodings.length; i++) {
        const encoding = encodings[(round + i) % encodings.length];
        const run = spawnSync(
          process.execPath,
          [script, files[encoding], '0', methodName, encoding],
          { encoding: 'utf8' },
        );
        if (run.status !== 0) throw new Error(`${encoding} child failed: ${run.stderr}`);
        times[encoding].push(Number(run.stdout.trim()));
      }
    }
    console.log(`${graph.length} nodes, ${rounds} fresh processes per encoding, medians:`);
    for (const encoding of encodings) {
      const sorted = [...times[encoding]].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)];
      console.log(
        `  ${encoding.padEnd(8)} ${median.toFixed(2)} ms (${sorted[0]}–${sorted.at(-1)})`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
