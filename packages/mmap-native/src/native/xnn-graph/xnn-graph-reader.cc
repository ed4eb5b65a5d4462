#include "xnn-graph-reader.h"

#include <cstring>
#include <limits>
#include <vector>

#include "checked-flatbuffer.h"
#include "named-keys.h"
#include "value-ids.h"

namespace mmap_native {

namespace {

// schema.fbs field slots. XNNGraph: xnodes, xvalues, input_ids, output_ids, constant_data.
constexpr uint32_t kGraphXnodes = 1;
constexpr uint32_t kGraphXvalues = 2;
constexpr uint32_t kGraphInputIds = 4;
constexpr uint32_t kGraphOutputIds = 5;
constexpr uint32_t kGraphConstantData = 8;
// XNNTensorValue.
constexpr uint32_t kTensorDatatype = 0;
constexpr uint32_t kTensorDims = 2;
constexpr uint32_t kTensorConstantBufferIdx = 3;
constexpr uint32_t kTensorExternalId = 4;
constexpr uint32_t kTensorFlags = 5;
constexpr uint32_t kTensorIdOut = 6;
// XValue {xvalue_union_type, xvalue_union}; XNNQuantizedTensorValue {tensor_value, ...}.
constexpr uint32_t kValueType = 0;
constexpr uint32_t kValueUnion = 1;
constexpr uint32_t kQuantizedTensor = 0;
// XValueUnion members.
constexpr uint8_t kValueTensor = 1;
constexpr uint8_t kValueQuantized = 2;
// XNode {xnode_union_type, xnode_union, debug_handle, output_min_max}.
constexpr uint32_t kNodeType = 0;
constexpr uint32_t kNodeUnion = 1;
constexpr uint32_t kNodeOutputMinMax = 3;
// XNodeUnion: XNNFullyConnected {input1_id, filter_id, bias_id, output_id, flags}.
constexpr uint8_t kNodeFullyConnected = 2;

// XNodeUnion members whose table is _XNNNode1x1 {input_id, output_id, flags}.
bool IsNode1x1(uint8_t type) {
  switch (type) {
    case 3: case 4: case 6: case 17: case 18: case 19: case 22: case 23: case 24: case 27:
    case 28: case 30: case 40: case 41: case 42: case 43: case 44: case 45: case 46: case 47:
      return true;
    default:
      return false;
  }
}

std::string At(const char* list, uint64_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

class GraphReader {
 public:
  GraphReader(const uint8_t* bytes, size_t length, XnnGraphColumns* columns,
              std::string* error)
      : bytes_(bytes), length_(length), fb_(bytes, length, error), columns_(columns),
        error_(error) {}

  bool Read();

 private:
  bool ReadValues(const CheckedVector& list);
  bool ReadNodes(const CheckedVector& list);
  bool ReadExternals(const CheckedTable& graph, uint32_t slot, const char* name,
                     std::vector<uint32_t>* indices);
  // A u32 field of a table AlignedTable accepted (absent: 0, the schema's default).
  bool FieldU32(int64_t table, uint32_t slot, const char* name, uint32_t* value);
  // A value id field of a node's arguments, as a value index.
  bool IdField(int64_t table, uint32_t slot, uint32_t node, bool optional, uint32_t* index);
  // The table at element `index` of a vector of uoffsets, read as tableReader's callers do.
  int64_t Element(const CheckedVector& list, uint32_t index) const {
    const int64_t at = list.start + 4 * int64_t{index};
    return at + fb_.WordU32(at);
  }

  const uint8_t* bytes_;
  size_t length_;
  CheckedFlatbuffer fb_;
  XnnGraphColumns* columns_;
  std::string* error_;
  ValueIds ids_;
};

bool GraphReader::FieldU32(int64_t table, uint32_t slot, const char* name, uint32_t* value) {
  int64_t at = 0;
  if (!fb_.AlignedField(table, slot, 4, name, &at)) return false;
  *value = at == 0 ? 0 : fb_.U32(at);
  return true;
}

bool GraphReader::Read() {
  if (!fb_.Inside(0, 8)) {
    return fb_.Fail("file identifier: " + std::to_string(length_) + " bytes");
  }
  const char* identifier = reinterpret_cast<const char*>(bytes_ + 4);
  // XNNGraph identifiers the runtime accepts (runtime/XNNCompiler.cpp).
  if (std::memcmp(identifier, "XN01", 4) != 0 && std::memcmp(identifier, "XN00", 4) != 0) {
    return fb_.Fail("expected the XNNGraph identifier XN01");
  }
  CheckedTable graph;
  CheckedVector values;
  CheckedVector nodes;
  CheckedVector constants;
  if (!fb_.Table(fb_.U32(0), "XNNGraph", &graph) ||
      !fb_.FieldVector(graph, kGraphXvalues, 4, "XNNGraph.xvalues", &values) ||
      !ReadValues(values) ||
      !fb_.FieldVector(graph, kGraphXnodes, 4, "XNNGraph.xnodes", &nodes) ||
      !ReadNodes(nodes) ||
      !fb_.FieldVector(graph, kGraphConstantData, 4, "XNNGraph.constant_data", &constants)) {
    return false;
  }
  for (size_t v = 0; v < columns_->constant_index.size(); ++v) {
    const uint32_t constant = columns_->constant_index[v];
    if (constant >= constants.length && constant != 0) {
      return fb_.Fail("value " + std::to_string(v) + ": constant " + std::to_string(constant) +
                      " of " + std::to_string(constants.length));
    }
  }
  if (!ReadExternals(graph, kGraphInputIds, "XNNGraph.input_ids", &columns_->input_ids) ||
      !ReadExternals(graph, kGraphOutputIds, "XNNGraph.output_ids", &columns_->output_ids)) {
    return false;
  }
  ReadNamedKeys(bytes_, length_, constants, columns_);
  return true;
}

bool GraphReader::ReadValues(const CheckedVector& list) {
  const uint32_t count = list.length;
  XnnGraphColumns& c = *columns_;
  c.datatype.assign(count, 0);
  c.quantized.assign(count, 0);
  c.constant_index.assign(count, 0);
  c.external_id.assign(count, 0);
  c.value_flags.assign(count, 0);
  c.dim_start.assign(uint64_t{count} + 1, 0);
  std::vector<uint32_t> ids(count);
  std::vector<CheckedVector> dims(count);
  uint64_t total_dims = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const int64_t value = Element(list, i);
    int64_t at = 0;
    if (!fb_.AlignedTable(value, "XValue") ||
        !fb_.AlignedField(value, kValueType, 1, "XValue", &at)) {
      return false;
    }
    const uint8_t type = at == 0 ? 0 : fb_.U8(at);
    if (type != kValueTensor && type != kValueQuantized) {
      return fb_.Fail(At("xvalues", i) + ": value type " + std::to_string(type));
    }
    if (!fb_.AlignedField(value, kValueUnion, 4, "XValue", &at)) return false;
    int64_t tensor = fb_.Target(at);
    if (tensor == 0) return fb_.Fail(At("xvalues", i) + ": no value");
    if (!fb_.AlignedTable(tensor, "XValue.xvalue_union")) return false;
    if (type == kValueQuantized) {
      if (!fb_.AlignedField(tensor, kQuantizedTensor, 4, "XNNQuantizedTensorValue", &at)) {
        return false;
      }
      tensor = fb_.Target(at);
      if (tensor == 0) return fb_.Fail(At("xvalues", i) + ": a quantized value without its tensor");
      if (!fb_.AlignedTable(tensor, "XNNQuantizedTensorValue.tensor_value")) return false;
    }
    c.quantized[i] = type == kValueQuantized ? 1 : 0;
    if (!FieldU32(tensor, kTensorIdOut, "XNNTensorValue", &ids[i]) ||
        !fb_.AlignedField(tensor, kTensorDatatype, 2, "XNNTensorValue", &at)) {
      return false;
    }
    c.datatype[i] = at == 0 ? 0 : fb_.U16(at);
    if (!FieldU32(tensor, kTensorConstantBufferIdx, "XNNTensorValue", &c.constant_index[i]) ||
        !FieldU32(tensor, kTensorExternalId, "XNNTensorValue", &c.external_id[i]) ||
        !FieldU32(tensor, kTensorFlags, "XNNTensorValue", &c.value_flags[i]) ||
        !fb_.AlignedField(tensor, kTensorDims, 4, "XNNTensorValue", &at) ||
        !fb_.VectorAt(fb_.Target(at), 4, "XNNTensorValue.dims", &dims[i])) {
      return false;
    }
    total_dims += dims[i].length;
  }
  // Values may share a dims vector: without a bound, a small buffer could ask for memory
  // quadratic in its length.
  if (total_dims > length_) {
    return fb_.Fail("XNNTensorValue.dims: " + std::to_string(total_dims) +
                    " dims in all, more than the " + std::to_string(length_) + " bytes read");
  }
  c.dims.resize(total_dims);
  uint32_t next = 0;
  for (uint32_t i = 0; i < count; ++i) {
    c.dim_start[i] = next;
    for (uint32_t d = 0; d < dims[i].length; ++d) c.dims[next++] = fb_.U32(dims[i].start + 4 * d);
  }
  c.dim_start[count] = next;
  return ids_.Build(std::move(ids), error_);
}

bool GraphReader::IdField(int64_t table, uint32_t slot, uint32_t node, bool optional,
                          uint32_t* index) {
  uint32_t id = 0;
  if (!FieldU32(table, slot, "XNode arguments", &id)) return false;
  if (optional && id == kXnnInvalidId) {
    *index = kXnnInvalidId;
    return true;
  }
  const int64_t found = ids_.IndexOf(id);
  if (found < 0) return fb_.Fail(At("xnodes", node) + ": no value has id " + std::to_string(id));
  *index = static_cast<uint32_t>(found);
  return true;
}

bool GraphReader::ReadNodes(const CheckedVector& list) {
  const uint32_t count = list.length;
  XnnGraphColumns& c = *columns_;
  c.node_type.assign(count, 0);
  c.node_input.assign(count, kXnnInvalidId);
  c.node_filter.assign(count, kXnnInvalidId);
  c.node_bias.assign(count, kXnnInvalidId);
  c.node_output.assign(count, kXnnInvalidId);
  c.node_flags.assign(count, 0);
  // XNNCompiler.cpp reads an absent output_min_max as no clamping.
  c.output_min.assign(count, -std::numeric_limits<float>::infinity());
  c.output_max.assign(count, std::numeric_limits<float>::infinity());
  for (uint32_t n = 0; n < count; ++n) {
    const int64_t node = Element(list, n);
    int64_t at = 0;
    if (!fb_.AlignedTable(node, "XNode") || !fb_.AlignedField(node, kNodeType, 1, "XNode", &at)) {
      return false;
    }
    const uint8_t type = at == 0 ? 0 : fb_.U8(at);
    c.node_type[n] = type;
    if (!fb_.AlignedField(node, kNodeUnion, 4, "XNode", &at)) return false;
    const int64_t args = fb_.Target(at);
    if (args == 0) return fb_.Fail(At("xnodes", n) + ": no node arguments");
    if (!fb_.AlignedTable(args, "XNode.xnode_union") ||
        !fb_.AlignedField(node, kNodeOutputMinMax, 4, "XNode", &at)) {
      return false;
    }
    const int64_t min_max = fb_.Target(at);
    if (min_max != 0) {
      // Absent fields read as the schema's default, 0.0 (as XNNCompiler reads them).
      uint32_t min_bits = 0;
      uint32_t max_bits = 0;
      if (!fb_.AlignedTable(min_max, "OutputMinMax") ||
          !FieldU32(min_max, 0, "OutputMinMax", &min_bits) ||
          !FieldU32(min_max, 1, "OutputMinMax", &max_bits)) {
        return false;
      }
      std::memcpy(&c.output_min[n], &min_bits, 4);
      std::memcpy(&c.output_max[n], &max_bits, 4);
    }
    if (type == kNodeFullyConnected) {
      if (!IdField(args, 0, n, false, &c.node_input[n]) ||
          !IdField(args, 1, n, false, &c.node_filter[n]) ||
          !IdField(args, 2, n, true, &c.node_bias[n]) ||
          !IdField(args, 3, n, false, &c.node_output[n]) ||
          !FieldU32(args, 4, "XNNFullyConnected", &c.node_flags[n])) {
        return false;
      }
    } else if (IsNode1x1(type)) {
      if (!IdField(args, 0, n, false, &c.node_input[n]) ||
          !IdField(args, 1, n, false, &c.node_output[n]) ||
          !FieldU32(args, 2, "XNode arguments", &c.node_flags[n])) {
        return false;
      }
    }
  }
  return true;
}

bool GraphReader::ReadExternals(const CheckedTable& graph, uint32_t slot, const char* name,
                                std::vector<uint32_t>* indices) {
  CheckedVector list;
  if (!fb_.FieldVector(graph, slot, 4, name, &list)) return false;
  indices->resize(list.length);
  for (uint32_t i = 0; i < list.length; ++i) {
    const uint32_t id = fb_.U32(list.start + 4 * int64_t{i});
    const int64_t found = ids_.IndexOf(id);
    if (found < 0) return fb_.Fail(std::string(name) + ": no value has id " + std::to_string(id));
    (*indices)[i] = static_cast<uint32_t>(found);
  }
  return true;
}

}  // namespace

bool ReadXnnGraph(const uint8_t* bytes, size_t length, XnnGraphColumns* columns,
                  std::string* error) {
  error->clear();
  return GraphReader(bytes, length, columns, error).Read();
}

}  // namespace mmap_native
