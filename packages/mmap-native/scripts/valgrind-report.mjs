// Reads a memcheck log and reports only what involves mmap_native.node.
// Exit 1 when the addon has invalid accesses, uninitialised reads or definite leaks.
import { readFileSync } from 'node:fs';

const log = process.argv[2];
const text = readFileSync(log, 'utf8');
// Records are separated by lines holding only the "==pid==" prefix.
const records = text.split(/\n==\d+==\s*\n/).map((r) => r.replace(/^==\d+== ?/gm, '').trim());
const ours = (record) => record.includes('mmap_native.node');
const errors = records.filter(
  (r) => /^(Invalid|Conditional|Use of uninitialised|Syscall param|Mismatched)/m.test(r) && ours(r),
);
const definite = records.filter((r) => /definitely lost in loss record/.test(r) && ours(r));
const totalErrors = text.match(/ERROR SUMMARY: (\d+) errors/)?.[1] ?? '?';
const definitelyLost = text.match(/definitely lost: ([\d,]+ bytes in [\d,]+ blocks)/)?.[1] ?? '0';

for (const record of [...errors, ...definite]) console.log(`${record}\n`);
console.log(
  `valgrind (memcheck): addon errors ${errors.length}, addon definite leaks ${definite.length} ` +
    `| whole process (Node/V8 included): ${totalErrors} errors, definitely lost ${definitelyLost} ` +
    `| log ${log}`,
);
process.exit(errors.length + definite.length > 0 ? 1 : 0);
