#include "checked-flatbuffer.h"

namespace mmap_native {

namespace {

// "XValue: a table at 6 outside the 96 bytes read" (`how` is " outside" or ", misaligned
// or outside").
std::string Misplaced(const char* name, const char* what, const char* how, int64_t at,
                      int64_t length) {
  return std::string(name) + ": " + what + " at " + std::to_string(at) + how + " the " +
         std::to_string(length) + " bytes read";
}

std::string Outside(const char* name, const char* what, int64_t at, int64_t length) {
  return Misplaced(name, what, " outside", at, length);
}

std::string MisalignedOrOutside(const char* name, const char* what, int64_t at,
                                int64_t length) {
  return Misplaced(name, what, ", misaligned or outside", at, length);
}

}  // namespace

bool CheckedFlatbuffer::Fail(const std::string& what) {
  if (error_->empty()) *error_ = what;
  return false;
}

bool CheckedFlatbuffer::TableSizes(int64_t at, int64_t vtable, const char* name,
                                   uint32_t* vtable_size, uint32_t* table_size) {
  *vtable_size = U16(vtable);
  *table_size = U16(vtable + 2);
  if (*vtable_size < 4 || *vtable_size % 2 != 0 || !Inside(vtable, *vtable_size)) {
    return Fail(std::string(name) + ": vtable size " + std::to_string(*vtable_size));
  }
  if (*table_size < 4 || !Inside(at, *table_size)) {
    return Fail(std::string(name) + ": table size " + std::to_string(*table_size));
  }
  return true;
}

bool CheckedFlatbuffer::AlignedTable(int64_t at, const char* name) {
  if (!(at % 4 == 0 && Inside(at, 4))) {
    return Fail(MisalignedOrOutside(name, "a table", at, length()));
  }
  const int64_t vtable = at - I32(at);
  if (!(vtable % 2 == 0 && Inside(vtable, 4))) {
    return Fail(MisalignedOrOutside(name, "a vtable", vtable, length()));
  }
  uint32_t vtable_size = 0;
  uint32_t table_size = 0;
  return TableSizes(at, vtable, name, &vtable_size, &table_size);
}

bool CheckedFlatbuffer::AlignedField(int64_t table, uint32_t slot, uint32_t size,
                                     const char* name, int64_t* position) {
  *position = 0;
  const int64_t vtable = table - I32(table);
  if (2 * slot + 6 > U16(vtable)) return true;
  const uint32_t offset = U16(vtable + 4 + 2 * slot);
  if (offset == 0) return true;
  const int64_t at = table + offset;
  if (offset < 4 || offset + size > U16(vtable + 2) || at % size != 0) {
    return Fail(std::string(name) + ": field " + std::to_string(slot) + " at " +
                std::to_string(offset) + ", misaligned or outside the table");
  }
  *position = at;
  return true;
}

bool CheckedFlatbuffer::Table(int64_t at, const char* name, CheckedTable* table) {
  if (!Inside(at, 4)) return Fail(Outside(name, "a table", at, length()));
  const int64_t vtable = at - I32(at);
  if (!Inside(vtable, 4)) return Fail(Outside(name, "a vtable", vtable, length()));
  uint32_t vtable_size = 0;
  uint32_t table_size = 0;
  if (!TableSizes(at, vtable, name, &vtable_size, &table_size)) return false;
  *table = CheckedTable{at, vtable, vtable_size, table_size};
  return true;
}

bool CheckedFlatbuffer::Field(const CheckedTable& table, uint32_t slot, uint32_t size,
                              const char* name, int64_t* position) {
  *position = 0;
  const uint32_t entry = 4 + 2 * slot;
  if (entry + 2 > table.vtable_size) return true;
  const uint32_t offset = U16(table.vtable + entry);
  if (offset == 0) return true;
  if (offset < 4 || offset + size > table.table_size) {
    return Fail(std::string(name) + ": field " + std::to_string(slot) + " at " +
                std::to_string(offset) + " lies outside the table");
  }
  *position = table.at + offset;
  return true;
}

bool CheckedFlatbuffer::FieldVector(const CheckedTable& table, uint32_t slot,
                                    uint32_t element_size, const char* name,
                                    CheckedVector* vector) {
  *vector = CheckedVector{};
  int64_t field = 0;
  if (!Field(table, slot, 4, name, &field)) return false;
  if (field == 0) return true;
  const int64_t at = field + U32(field);
  if (!Inside(at, 4)) return Fail(Outside(name, "a vector", at, length()));
  const uint32_t count = U32(at);
  if (!Inside(at + 4, uint64_t{count} * element_size)) {
    return Fail(std::string(name) + ": " + std::to_string(count) + " elements at " +
                std::to_string(at) + " run past the " + std::to_string(length()) +
                " bytes read");
  }
  *vector = CheckedVector{at + 4, count, true};
  return true;
}

bool CheckedFlatbuffer::VectorAt(int64_t at, uint32_t element_size, const char* name,
                                 CheckedVector* vector) {
  *vector = CheckedVector{};
  if (at == 0) return true;
  if (at % 4 != 0) {
    return Fail(std::string(name) + ": a vector at " + std::to_string(at) + ", misaligned");
  }
  if (!Inside(at, 4)) return Fail(Outside(name, "a vector", at, length()));
  const uint32_t count = U32(at);
  if (!Inside(at + 4, uint64_t{count} * element_size)) {
    return Fail(std::string(name) + ": " + std::to_string(count) + " elements at " +
                std::to_string(at) + " run past the " + std::to_string(length()) +
                " bytes read");
  }
  *vector = CheckedVector{at + 4, count, true};
  return true;
}

}  // namespace mmap_native
