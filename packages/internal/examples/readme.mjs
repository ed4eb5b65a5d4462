// The wording and rounding every memlayer package shares.
import { alignUp, expectedButReceived } from '@memlayer/internal';

console.log(expectedButReceived('a positive integer', 'size', -1));
// Expected a positive integer for size but received number -1
console.log(alignUp(100, 64)); // 128
