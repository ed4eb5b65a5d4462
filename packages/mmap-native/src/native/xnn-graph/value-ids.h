// Value ids to indices in xvalues, as module-loader's valueIndex (src/pte/xnn-graph.ts):
// the serializer numbers values in order (backends/xnnpack/operators/node_visitor.py:
// id_out = len(xvalues)), and the runtime maps any unique ids (runtime/XNNCompiler.cpp
// remapped_ids), so identity is the fast case and a sorted table the general one.
#ifndef MMAP_NATIVE_XNN_GRAPH_VALUE_IDS_H
#define MMAP_NATIVE_XNN_GRAPH_VALUE_IDS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mmap_native {

class ValueIds {
 public:
  // Takes each value's id_out, by index. False (and `error` says which) when ids repeat.
  bool Build(std::vector<uint32_t> ids, std::string* error);
  // The index of the value with id `id`, or -1 when no value has it.
  int64_t IndexOf(uint32_t id) const;

 private:
  size_t count_ = 0;
  bool identity_ = true;
  std::vector<std::pair<uint32_t, uint32_t>> sorted_;  // (id, index) by id
};

}  // namespace mmap_native

#endif
