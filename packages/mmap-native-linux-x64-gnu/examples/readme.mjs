// What @memlayer/mmap-native does with this package: load the addon it holds.
import { createRequire } from 'node:module';

const addon = createRequire(import.meta.url)('@memlayer/mmap-native-linux-x64-gnu');
console.log(addon.supported, addon.pageSize()); // true 4096
