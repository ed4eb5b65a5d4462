// A flatbuffer's bytes with every offset, vtable and vector checked before it is read, with
// the acceptance rules of module-loader's src/pte/flatbuffer.ts (the JavaScript reader this
// one must agree with): the "Aligned" calls are its tableReader(), the others its
// FlatBuffer methods, which do not require alignment. A failed check records what was
// malformed and returns false; positions are 64-bit so no sum of offsets can wrap.
#ifndef MMAP_NATIVE_XNN_GRAPH_CHECKED_FLATBUFFER_H
#define MMAP_NATIVE_XNN_GRAPH_CHECKED_FLATBUFFER_H

#include <cstdint>
#include <cstring>
#include <string>

namespace mmap_native {

// A table found by CheckedFlatbuffer::Table: its position and its vtable's.
struct CheckedTable {
  int64_t at = 0;
  int64_t vtable = 0;
  uint32_t vtable_size = 0;
  uint32_t table_size = 0;
};

// A vector's first element and element count; `present` is false for an absent field.
struct CheckedVector {
  int64_t start = 0;
  uint32_t length = 0;
  bool present = false;
};

class CheckedFlatbuffer {
 public:
  // `error` receives the description of the first failed check.
  CheckedFlatbuffer(const uint8_t* bytes, size_t length, std::string* error)
      : bytes_(bytes), length_(length), error_(error) {}

  int64_t length() const { return static_cast<int64_t>(length_); }

  // Whether [at, at + size) lies inside the buffer.
  bool Inside(int64_t at, uint64_t size) const {
    return at >= 0 && static_cast<uint64_t>(at) <= length_ &&
           size <= length_ - static_cast<uint64_t>(at);
  }

  // Reads at positions a check has already bounded (little-endian hosts only).
  uint8_t U8(int64_t at) const { return bytes_[at]; }
  uint16_t U16(int64_t at) const { return Read<uint16_t>(at); }
  uint32_t U32(int64_t at) const { return Read<uint32_t>(at); }
  int32_t I32(int64_t at) const { return Read<int32_t>(at); }
  // The u32 of the 4-byte word holding byte `at`, as flatbuffer.ts's words.u32[at >> 2].
  uint32_t WordU32(int64_t at) const { return Read<uint32_t>(at & ~int64_t{3}); }

  // Records `what` (unless a failure is recorded already) and returns false.
  bool Fail(const std::string& what);

  // tableReader().table: a 4-aligned table, its 2-aligned vtable and both sizes inside.
  bool AlignedTable(int64_t at, const char* name);
  // tableReader().field of a table AlignedTable accepted: field `slot`'s position, 0 when
  // absent, aligned to `size` and inside the table.
  bool AlignedField(int64_t table, uint32_t slot, uint32_t size, const char* name,
                    int64_t* position);
  // tableReader().target: where the uoffset at a field's position points (0: absent).
  int64_t Target(int64_t position) const { return position == 0 ? 0 : position + U32(position); }

  // FlatBuffer.table: as AlignedTable without alignment.
  bool Table(int64_t at, const char* name, CheckedTable* table);
  // FlatBuffer.field: field `slot`'s position (0: absent) inside the table, any alignment.
  bool Field(const CheckedTable& table, uint32_t slot, uint32_t size, const char* name,
             int64_t* position);
  // FlatBuffer.fieldVector: the vector a field points at, its elements inside the buffer.
  bool FieldVector(const CheckedTable& table, uint32_t slot, uint32_t element_size,
                   const char* name, CheckedVector* vector);
  // FlatBuffer.vectorAt: the 4-aligned vector at `at` (0: none).
  bool VectorAt(int64_t at, uint32_t element_size, const char* name, CheckedVector* vector);

 private:
  // What Table and AlignedTable both check at a vtable: its size (even, at least 4, inside)
  // and its table's (at least 4, inside from `at`).
  bool TableSizes(int64_t at, int64_t vtable, const char* name, uint32_t* vtable_size,
                  uint32_t* table_size);

  template <typename T>
  T Read(int64_t at) const {
    T value;
    std::memcpy(&value, bytes_ + at, sizeof(T));  // memcpy: no unaligned or aliasing read
    return value;
  }

  const uint8_t* bytes_;
  size_t length_;
  std::string* error_;
};

}  // namespace mmap_native

#endif
