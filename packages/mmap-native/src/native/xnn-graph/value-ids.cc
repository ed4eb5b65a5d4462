#include "value-ids.h"

#include <algorithm>

namespace mmap_native {

bool ValueIds::Build(std::vector<uint32_t> ids, std::string* error) {
  count_ = ids.size();
  identity_ = true;
  for (size_t i = 0; i < ids.size() && identity_; ++i) identity_ = ids[i] == i;
  if (identity_) return true;
  sorted_.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) sorted_[i] = {ids[i], static_cast<uint32_t>(i)};
  std::sort(sorted_.begin(), sorted_.end());
  for (size_t i = 1; i < sorted_.size(); ++i) {
    if (sorted_[i].first == sorted_[i - 1].first) {
      *error = "xvalues[" + std::to_string(sorted_[i].second) + "]: id_out " +
               std::to_string(sorted_[i].first) + " is taken";
      return false;
    }
  }
  return true;
}

int64_t ValueIds::IndexOf(uint32_t id) const {
  if (identity_) return id < count_ ? int64_t{id} : -1;
  auto found = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(id, uint32_t{0}));
  return found != sorted_.end() && found->first == id ? int64_t{found->second} : -1;
}

}  // namespace mmap_native
