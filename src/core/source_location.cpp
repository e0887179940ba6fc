// std::source_location is a pointer to a record of (file, function, line, column) that the
// compiler emits for each `current()` call (libstdc++'s `__impl`). A location of another
// language's program is made by building such a record, kept for the life of the program, and
// copying its address into a source_location. The layout is checked once against a real
// location, so another standard library gets an ordinary location rather than garbage.
#include "symtrace/core/detail/source_location.hpp"

#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

namespace symtrace::detail {

namespace {

// libstdc++'s std::source_location::__impl, field for field.
struct LocationRecord {
  const char* file_name;
  const char* function_name;
  unsigned line;
  unsigned column;
};

std::source_location from_record(const LocationRecord* record) noexcept {
  std::source_location location;
  if constexpr (sizeof(location) == sizeof(record))  // else layout_matches() is false: never called
    std::memcpy(static_cast<void*>(&location), &record, sizeof(record));
  return location;
}

bool layout_matches() noexcept {
#if defined(__GLIBCXX__)
  const std::source_location real = std::source_location::current();
  if constexpr (sizeof(std::source_location) != sizeof(const LocationRecord*)) {
    return false;
  } else {
    const LocationRecord* record = nullptr;
    std::memcpy(&record, &real, sizeof(record));
    return record != nullptr && record->file_name == real.file_name() &&
           record->function_name == real.function_name() && record->line == real.line() &&
           record->column == real.column();
  }
#else
  return false;
#endif
}

struct Key {
  std::string file, function;
  std::uint32_t line, column;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h = std::hash<std::string>{}(k.file);
    h ^= std::hash<std::string>{}(k.function) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h ^ (std::size_t{k.line} << 20) ^ k.column;
  }
};

struct Store {
  std::mutex mutex;
  // Node-based: a record's address and its strings' addresses never change.
  std::unordered_map<Key, LocationRecord, KeyHash> records;
};

}  // namespace

std::source_location make_source_location(std::string_view file, std::uint32_t line, std::string_view function,
                                          std::uint32_t column) {
  static const bool usable = layout_matches();
  if (!usable) return std::source_location::current();
  static Store* store = new Store;  // never destroyed: locations outlive static destruction
  std::lock_guard lock(store->mutex);
  auto [it, inserted] = store->records.try_emplace(Key{std::string(file), std::string(function), line, column});
  if (inserted) it->second = LocationRecord{it->first.file.c_str(), it->first.function.c_str(), line, column};
  return from_record(&it->second);
}

}  // namespace symtrace::detail
