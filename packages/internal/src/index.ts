export { alignUp, isAligned } from './alignment.js';
export { describeValue, expectedButReceived } from './describe-value.js';
