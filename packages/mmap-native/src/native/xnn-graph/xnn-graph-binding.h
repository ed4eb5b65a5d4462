// readXnnGraph(bytes: Uint8Array): the columns of an XNNGraph flatbuffer as one
// ArrayBuffer plus its constants' ASCII named keys as one string, or a string saying what
// is malformed. The layout is read by src/xnn-graph/xnn-graph-reader.ts.
#ifndef MMAP_NATIVE_XNN_GRAPH_XNN_GRAPH_BINDING_H
#define MMAP_NATIVE_XNN_GRAPH_XNN_GRAPH_BINDING_H

#include <napi.h>

namespace mmap_native {

void InitXnnGraph(Napi::Env env, Napi::Object exports);

}  // namespace mmap_native

#endif
