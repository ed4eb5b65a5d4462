// The constants' named keys (ConstantDataOffset.named_key), read ahead so a caller gets
// each as a slice of one string rather than decoding UTF-8 per key. Only keys whose bytes
// are all ASCII are read: any other key, and any entry the checks refuse, is left to the
// caller's own reader (KeyState::kUnread), which decodes or refuses it when it is asked for,
// as module-loader reads keys lazily.
#ifndef MMAP_NATIVE_XNN_GRAPH_NAMED_KEYS_H
#define MMAP_NATIVE_XNN_GRAPH_NAMED_KEYS_H

#include <cstddef>
#include <cstdint>

#include "checked-flatbuffer.h"
#include "xnn-graph-columns.h"

namespace mmap_native {

// Fills key_state, key_start and keys for the ConstantDataOffset tables of `constants`.
void ReadNamedKeys(const uint8_t* bytes, size_t length, const CheckedVector& constants,
                   XnnGraphColumns* columns);

}  // namespace mmap_native

#endif
