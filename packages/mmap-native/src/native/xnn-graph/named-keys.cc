#include "named-keys.h"

#include <algorithm>
#include <string>

namespace mmap_native {

namespace {

// ConstantDataOffset (schema.fbs): offset, size, named_key.
constexpr uint32_t kConstantNamedKey = 2;
// Constants may share one key table, so the keys' total is bounded (by the buffer, and
// well under V8's longest string); keys past it are left to the caller.
constexpr uint64_t kMaxKeyBytes = uint64_t{1} << 28;

bool IsAscii(const uint8_t* bytes, uint32_t length) {
  uint8_t any = 0;
  for (uint32_t i = 0; i < length; ++i) any |= bytes[i];
  return any < 0x80;
}

}  // namespace

void ReadNamedKeys(const uint8_t* bytes, size_t length, const CheckedVector& constants,
                   XnnGraphColumns* columns) {
  // A refused entry is not the graph's error: the caller's reader reports it on use.
  std::string ignored;
  CheckedFlatbuffer fb(bytes, length, &ignored);
  const uint64_t budget = std::min<uint64_t>(length, kMaxKeyBytes);
  columns->key_state.assign(constants.length, static_cast<uint8_t>(KeyState::kUnread));
  columns->key_start.assign(uint64_t{constants.length} + 1, 0);
  std::string& keys = columns->keys;
  for (uint32_t i = 0; i < constants.length; ++i) {
    columns->key_start[i] = static_cast<uint32_t>(keys.size());
    ignored.clear();
    const int64_t element = constants.start + 4 * int64_t{i};
    CheckedTable table;
    CheckedVector key;
    if (!fb.Table(element + fb.U32(element), "ConstantDataOffset", &table) ||
        !fb.FieldVector(table, kConstantNamedKey, 1, "ConstantDataOffset.named_key", &key)) {
      continue;
    }
    if (!key.present) {
      columns->key_state[i] = static_cast<uint8_t>(KeyState::kNone);
      continue;
    }
    if (keys.size() + key.length > budget || !IsAscii(bytes + key.start, key.length)) continue;
    keys.append(reinterpret_cast<const char*>(bytes + key.start), key.length);
    columns->key_state[i] = static_cast<uint8_t>(KeyState::kInKeys);
  }
  columns->key_start[constants.length] = static_cast<uint32_t>(keys.size());
}

}  // namespace mmap_native
