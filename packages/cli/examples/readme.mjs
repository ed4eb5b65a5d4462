import { main } from '@memlayer/cli';

// One invocation in-process: the demo's figures as JSON, its log lines kept quiet.
let json = '';
const code = await main(['demo', '--quick', '--json'], {
  stdout: (text) => {
    json += text;
  },
  stderr: () => {},
});
const figures = JSON.parse(json);
console.log(`memlayer demo --quick: exit ${code}`);
console.log(
  `cold start packed ${figures.cold.packs} layers; warm start packed ${figures.warm.packs}`,
);
console.log(`outputs identical across cold, warm and heap-only: ${figures.outputsIdentical}`);
