// ReadXnnGraph: the columns of an XNNGraph flatbuffer (the XNNPACK delegate's graph,
// backends/xnnpack/serialization/schema.fbs), with the checks and acceptance of
// module-loader's JavaScript readXnnGraph: a buffer one accepts the other accepts with the
// same columns. Time and memory are linear in the buffer's length.
#ifndef MMAP_NATIVE_XNN_GRAPH_XNN_GRAPH_READER_H
#define MMAP_NATIVE_XNN_GRAPH_XNN_GRAPH_READER_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "xnn-graph-columns.h"

namespace mmap_native {

// False when the buffer is malformed; `error` then says which field and why.
bool ReadXnnGraph(const uint8_t* bytes, size_t length, XnnGraphColumns* columns,
                  std::string* error);

}  // namespace mmap_native

#endif
