// The low-level .pte/.ptd writer, for tests that build programs field by field (it is not
// part of the package's public API: users export programs with exportProgram).
export { encodePtd } from '../src/pte/write/ptd.js';
export { encodePte } from '../src/pte/write/pte.js';
export {
  type ExecutionPlanDescription,
  type NamedDataEntry,
  type PteDescription,
  SCALAR_TYPE_FLOAT,
} from '../src/pte/write/pte-description.js';
export {
  XNN_DATATYPE_FP32,
  XNN_INVALID_VALUE_ID,
  XNN_NAMED_CONSTANT_OFFSET,
  XNODE_UNION_TYPE,
  type XnnConstantDataDescription,
  type XnnGraphDescription,
  type XnnNodeDescription,
  type XnnTensorValueDescription,
} from '../src/pte/write/xnn-graph-description.js';
export { encodeXnnPayload } from '../src/pte/write/xnn-payload.js';
