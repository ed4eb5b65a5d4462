// Records the URL of every module `import` loads from the call on, through a loader hook: for
// tests that check what a package loads (probe-exports.mjs, module-loader's import-graph
// fixture). The hook runs on its own thread and reports each URL as it loads it.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const HOOK = `data:text/javascript,${encodeURIComponent(
  'let port; export function initialize(data) { port = data.port; }' +
    'export async function load(url, context, next) { port.postMessage(url); return next(url, context); }',
)}`;

/** The URLs loaded so far (filled as reports arrive), and a wait for the last reports. */
export function recordImports() {
  const { port1, port2 } = new MessageChannel();
  const urls = [];
  port1.on('message', (url) => urls.push(url));
  port1.unref();
  register(HOOK, { data: { port: port2 }, transferList: [port2] });
  // The hook reports from its own thread: let its last messages arrive.
  const settled = () => new Promise((resolve) => setTimeout(resolve, 50));
  return { urls, settled };
}
