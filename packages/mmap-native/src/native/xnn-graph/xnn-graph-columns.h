// What ReadXnnGraph finds in an XNNGraph flatbuffer: the columns of module-loader's
// XnnGraph interface (src/pte/xnn-graph.ts), values named by their index in xvalues.
#ifndef MMAP_NATIVE_XNN_GRAPH_XNN_GRAPH_COLUMNS_H
#define MMAP_NATIVE_XNN_GRAPH_XNN_GRAPH_COLUMNS_H

#include <cstdint>
#include <string>
#include <vector>

namespace mmap_native {

// A value id that names no value (XNN_INVALID_VALUE_ID), e.g. an absent bias.
constexpr uint32_t kXnnInvalidId = 0xFFFFFFFFu;

// How a constant's named key was read.
enum class KeyState : uint8_t {
  kInKeys = 0,   // keys[key_start[i] .. key_start[i + 1]), every byte ASCII
  kNone = 1,     // the constant has no named_key (stored by offset)
  kUnread = 2,   // left to the caller: not ASCII, malformed, or past the keys' byte budget
};

struct XnnGraphColumns {
  // Per node.
  std::vector<uint8_t> node_type;
  std::vector<uint32_t> node_input;
  std::vector<uint32_t> node_filter;
  std::vector<uint32_t> node_bias;
  std::vector<uint32_t> node_output;
  std::vector<uint32_t> node_flags;
  std::vector<float> output_min;
  std::vector<float> output_max;
  // Per value.
  std::vector<uint16_t> datatype;
  std::vector<uint8_t> quantized;
  std::vector<uint32_t> constant_index;
  std::vector<uint32_t> external_id;
  std::vector<uint32_t> value_flags;
  std::vector<uint32_t> dim_start;  // one more than the values
  std::vector<uint32_t> dims;
  // As value indices.
  std::vector<uint32_t> input_ids;
  std::vector<uint32_t> output_ids;
  // Per constant (key_start has one more).
  std::vector<uint8_t> key_state;
  std::vector<uint32_t> key_start;
  std::string keys;
};

}  // namespace mmap_native

#endif
