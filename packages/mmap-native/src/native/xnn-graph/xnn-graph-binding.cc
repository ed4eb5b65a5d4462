// The columns' ArrayBuffer: eight u32 counts (nodes, values, dims, input ids, output ids,
// constants, 0, 0), then the u32 and f32 columns, the u16 one and the u8 ones, each
// packed after the last, in the order ColumnsBytes writes them.
#include "xnn-graph-binding.h"

#include <cstring>
#include <string>
#include <vector>

#include "../util/args.h"
#include "../util/errors.h"
#include "xnn-graph-reader.h"

namespace mmap_native {

namespace {

constexpr size_t kHeaderWords = 8;

class ColumnWriter {
 public:
  explicit ColumnWriter(uint8_t* out) : out_(out) {}
  template <typename T>
  void Write(const std::vector<T>& column) {
    if (out_ != nullptr && !column.empty()) std::memcpy(out_ + size_, column.data(), Bytes(column));
    size_ += Bytes(column);
  }
  size_t size() const { return size_; }

 private:
  template <typename T>
  static size_t Bytes(const std::vector<T>& column) {
    return column.size() * sizeof(T);
  }
  uint8_t* out_;
  size_t size_ = 0;
};

// Writes the columns after the header (or only counts their bytes when `writer` has no
// output), 4-byte columns first so every column is aligned to its element size.
void WriteColumns(const XnnGraphColumns& c, ColumnWriter* writer) {
  writer->Write(c.node_input);
  writer->Write(c.node_filter);
  writer->Write(c.node_bias);
  writer->Write(c.node_output);
  writer->Write(c.node_flags);
  writer->Write(c.output_min);
  writer->Write(c.output_max);
  writer->Write(c.constant_index);
  writer->Write(c.external_id);
  writer->Write(c.value_flags);
  writer->Write(c.dim_start);
  writer->Write(c.dims);
  writer->Write(c.input_ids);
  writer->Write(c.output_ids);
  writer->Write(c.key_start);
  writer->Write(c.datatype);
  writer->Write(c.node_type);
  writer->Write(c.quantized);
  writer->Write(c.key_state);
}

Napi::Value ColumnsBuffer(Napi::Env env, const XnnGraphColumns& c) {
  ColumnWriter sizer(nullptr);
  WriteColumns(c, &sizer);
  const size_t header_bytes = kHeaderWords * 4;
  Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, header_bytes + sizer.size());
  if (env.IsExceptionPending()) return env.Undefined();
  auto* out = static_cast<uint8_t*>(buffer.Data());
  const uint32_t header[kHeaderWords] = {
      static_cast<uint32_t>(c.node_type.size()),  static_cast<uint32_t>(c.datatype.size()),
      static_cast<uint32_t>(c.dims.size()),       static_cast<uint32_t>(c.input_ids.size()),
      static_cast<uint32_t>(c.output_ids.size()), static_cast<uint32_t>(c.key_state.size()),
      0,                                          0};
  std::memcpy(out, header, header_bytes);
  ColumnWriter writer(out + header_bytes);
  WriteColumns(c, &writer);
  return buffer;
}

Napi::Value ReadXnnGraphFunction(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint8_t* data = nullptr;
  size_t length = 0;
  if (!ReadBytes(env, info[0], "bytes", &data, &length)) return env.Undefined();
  XnnGraphColumns columns;
  std::string error;
  if (!ReadXnnGraph(data, length, &columns, &error)) return Napi::String::New(env, error);
  Napi::Value buffer = ColumnsBuffer(env, columns);
  if (env.IsExceptionPending()) return env.Undefined();
  napi_value keys = nullptr;
  if (napi_create_string_latin1(env, columns.keys.data(), columns.keys.size(), &keys) != napi_ok) {
    ThrowRangeError(env, "Cannot make a string of the named keys");
    return env.Undefined();
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("columns", buffer);
  result.Set("keys", Napi::Value(env, keys));
  return result;
}

}  // namespace

void InitXnnGraph(Napi::Env env, Napi::Object exports) {
  exports.Set("readXnnGraph", Napi::Function::New<ReadXnnGraphFunction>(env, "readXnnGraph"));
}

}  // namespace mmap_native
