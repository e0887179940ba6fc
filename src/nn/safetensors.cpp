// The safetensors reader and writer (format: https://github.com/huggingface/safetensors).
//
// Layout: an 8-byte little-endian u64 N, N bytes of UTF-8 JSON, then the data buffer. The
// writer pads the JSON with spaces so the data starts 8-byte aligned, as the reference does.
//
// The reader treats its input as hostile and follows the reference implementation's checks:
// the header length must fit the file and the 100 MB limit; the header must be a JSON object
// whose entries each have a known dtype, a shape of non-negative integers whose element count
// fits int64, and data_offsets [begin, end] with end - begin == numel * element size; sorted by
// offset, the entries must tile the data buffer exactly (no overlap, no hole, no trailing
// bytes). Every check runs before any tensor is allocated, and every byte read is inside
// `bytes`. Duplicate JSON keys, which nlohmann's DOM silently collapses (the last one wins),
// are caught by a parser callback.

#include "symtrace/nn/safetensors.hpp"

#include "symtrace/core/detail/strided.hpp"
#include "symtrace/core/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_set>
#include <utility>

namespace symtrace {

static_assert(std::endian::native == std::endian::little,
              "the safetensors reader and writer copy tensor data as raw bytes, which is only "
              "correct on a little-endian machine (safetensors data is little-endian)");

namespace {

// The CPU kernels iterate over at most 15 dims (symtrace/core/detail/strided.hpp).
constexpr std::size_t kMaxTensorRank = 15;

using json = nlohmann::json;

/// The reference implementation's limit on the header length (MAX_HEADER_SIZE).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

/// A dtype as a file may store it, and the symtrace dtype it is read as.
struct FileDType {
  std::string_view code;        ///< safetensors' name: "F32"
  std::string_view torch_name;  ///< PyTorch's name, for messages: "float32"
  std::size_t size;             ///< bytes per element
  DType target;                 ///< what the reader makes of it
};

constexpr std::array<FileDType, 10> kFileDTypes{{
    {"F32", "float32", 4, DType::float32},
    {"I64", "int64", 8, DType::int64},
    {"BOOL", "bool", 1, DType::bool_},
    {"F64", "float64", 8, DType::float32},
    {"F16", "float16", 2, DType::float32},
    {"BF16", "bfloat16", 2, DType::float32},
    {"I32", "int32", 4, DType::int64},
    {"I16", "int16", 2, DType::int64},
    {"I8", "int8", 1, DType::int64},
    {"U8", "uint8", 1, DType::int64},
}};

const FileDType* find_file_dtype(std::string_view code) {
  for (const FileDType& d : kFileDTypes)
    if (d.code == code) return &d;
  return nullptr;
}

std::string_view file_dtype_code(DType dtype) {
  switch (dtype) {
    case DType::float32: return "F32";
    case DType::int64: return "I64";
    case DType::bool_: return "BOOL";
    default: break;  // refused by save before it asks
  }
  return "BOOL";
}

/// "2, 4" for messages; a hostile rank is elided ("1, 1, 1, 1, 1, 1, 1, 1, ... (rank 5000)").
std::string dims_text(const std::vector<std::int64_t>& shape) {
  constexpr std::size_t kShown = 8;
  if (shape.size() <= kShown) return fmt::format("{}", fmt::join(shape, ", "));
  return fmt::format("{}, ... (rank {})", fmt::join(shape.begin(), shape.begin() + kShown, ", "),
                     shape.size());
}

/// "float32[2, 4]", for messages.
std::string describe(const FileDType& dtype, const std::vector<std::int64_t>& shape) {
  return fmt::format("{}[{}]", dtype.torch_name, dims_text(shape));
}

// ---- Errors ---------------------------------------------------------------------------------
// Messages start with the source (a file path or "<memory>"), not with a symtrace file:line:
// the problem is in the data, and the source is what the user can go and look at.

template <class... A>
[[noreturn]] void fail(std::string_view source, fmt::format_string<A...> format, A&&... args) {
  throw std::invalid_argument(
      fmt::format("{}: {}", source, fmt::vformat(format, fmt::make_format_args(args...))));
}

template <class... A>
[[noreturn]] void fail_tensor(std::string_view source, std::string_view tensor,
                              fmt::format_string<A...> format, A&&... args) {
  throw std::invalid_argument(fmt::format("{}: tensor '{}': {}", source, tensor,
                                          fmt::vformat(format, fmt::make_format_args(args...))));
}

/// "an array", "a number", ... for "is a JSON ..., not ..." messages.
std::string json_kind(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a non-integer number";
    case json::value_t::binary:
    case json::value_t::discarded: break;
  }
  return "an unexpected value";
}

/// `text` cut to at most `limit` bytes (whole UTF-8 characters) with "..." appended when cut.
std::string truncated(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0u) == 0x80u) --cut;
  text.resize(cut);
  return text + "...";
}

/// `value` as JSON text when that is short ("-1", "\"2\"", "[0,4,8]"), else its kind: a hostile
/// header must not turn into a huge message, nor recurse through deep nesting while dumping.
std::string brief(const json& value) {
  constexpr std::size_t kMaxText = 60;
  if (value.is_structured()) {
    if (value.size() > 8) return json_kind(value);
    for (const json& element : value)
      if (element.is_structured()) return json_kind(value);
  }
  return truncated(value.dump(), kMaxText);
}

/// The value of `value` if it is a JSON integer >= 0.
std::optional<std::uint64_t> as_unsigned(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  return std::nullopt;
}

// ---- Writing --------------------------------------------------------------------------------

/// `text` as a JSON string literal; throws when it is not valid UTF-8, which JSON requires.
std::string quoted(std::string_view source, std::string_view what, const std::string& text) {
  try {
    return json(text).dump();
  } catch (const json::type_error&) {
    fail(source, "cannot save {}: it is not valid UTF-8, which the JSON header requires", what);
  }
}

/// Appends `t`'s elements in row-major order (whatever its strides) to `out`.
void append_elements(const Tensor& t, std::byte* out) {
  const std::size_t size = element_size(t.dtype());
  const IntList sizes = t.shape().sizes();
  const auto* base = t.impl().storage->data;
  detail::for_each_run<1>(sizes, {detail::as_span(t.strides())}, {t.storage_offset()},
                          [&](auto off, std::int64_t n, auto inner) {
                            const auto count = static_cast<std::size_t>(n);
                            if (inner[0] == 1) {
                              std::memcpy(out, base + static_cast<std::size_t>(off[0]) * size, count * size);
                              out += count * size;
                              return;
                            }
                            for (std::int64_t i = 0; i < n; ++i) {
                              const auto at = static_cast<std::size_t>(off[0] + i * inner[0]) * size;
                              std::memcpy(out, base + at, size);
                              out += size;
                            }
                          });
}

std::vector<std::byte> serialize(const StateDict& state, const SafetensorsMetadata& metadata,
                                 std::string_view source) {
  // The outer object is assembled as text: ordered_json finds keys by linear search, which
  // would make writing n tensors O(n^2). StateDict keys are unique, so nothing is lost.
  std::string text = "{";
  if (!metadata.empty()) {
    text += "\"__metadata__\":{";
    const char* separator = "";
    for (const auto& [key, value] : metadata) {
      text += separator;
      text += quoted(source, fmt::format("the metadata key '{}'", key), key);
      text += ':';
      text += quoted(source, fmt::format("the metadata value of '{}'", key), value);
      separator = ",";
    }
    text += '}';
  }
  std::uint64_t data_bytes = 0;
  for (const auto& [key, t] : state) {
    if (key.empty()) fail(source, "cannot save a tensor with an empty name");
    if (key == "__metadata__")
      fail(source, "cannot save a tensor named '__metadata__': safetensors reserves that key for "
                   "the metadata; rename the tensor");
    if (!t.defined()) fail(source, "cannot save tensor '{}': it is undefined", key);
    if (t.is_symbolic())
      fail(source, "cannot save tensor '{}': it is symbolic (it names a node of a trace and "
                   "holds no data); save the model's state outside tracing",
           key);
    if (!is_computed(t.dtype()))
      fail(source, "cannot save tensor '{}': it is a {} tensor, and symtrace saves float32, int64 and bool tensors",
           key, t.dtype());
    const std::uint64_t bytes = static_cast<std::uint64_t>(*t.shape().numel()) * element_size(t.dtype());
    const nlohmann::ordered_json entry = {{"dtype", file_dtype_code(t.dtype())},
                                          {"shape", t.shape().sizes()},
                                          {"data_offsets", {data_bytes, data_bytes + bytes}}};
    if (text.size() > 1) text += ',';
    text += quoted(source, fmt::format("the tensor name '{}'", key), key);
    text += ':';
    text += entry.dump();
    data_bytes += bytes;
  }
  text += '}';
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  if (text.size() > kMaxHeaderBytes)
    fail(source, "cannot save: the header would take {} bytes, more than the {} bytes readers "
                 "accept; save fewer tensors or shorter names",
         text.size(), kMaxHeaderBytes);

  std::vector<std::byte> out(8 + text.size() + data_bytes);
  const std::uint64_t header_size = text.size();
  std::memcpy(out.data(), &header_size, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::byte* data = out.data() + 8 + text.size();
  for (const auto& [key, t] : state) {
    append_elements(t, data);
    data += static_cast<std::size_t>(*t.shape().numel()) * element_size(t.dtype());
  }
  return out;
}

// ---- Reading --------------------------------------------------------------------------------

/// One validated header entry.
struct Entry {
  std::string name;
  const FileDType* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

/// Parses the header JSON; `order` receives the top-level keys in document order (nlohmann's
/// object is a sorted map). Duplicate keys at any depth are refused: the DOM would keep only
/// the last one.
json parse_header(std::string_view text, std::string_view source, std::vector<std::string>& order) {
  std::vector<std::unordered_set<std::string>> open_objects;
  bool root_is_object = false;  // otherwise the header is refused as a whole, duplicates or not
  std::string current;          // the top-level key whose value is being parsed
  std::optional<std::string> duplicate;
  const auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        if (depth == 0) root_is_object = true;
        open_objects.emplace_back();
        break;
      case json::parse_event_t::object_end: open_objects.pop_back(); break;
      case json::parse_event_t::key: {
        auto key = parsed.get<std::string>();
        if (depth == 1) {
          current = key;
          order.push_back(key);
        }
        if (root_is_object && !duplicate && !open_objects.back().insert(key).second) {
          if (depth == 1)
            duplicate = key == "__metadata__" ? std::string("the header has two \"__metadata__\" entries")
                                              : fmt::format("the header lists tensor '{}' twice", key);
          else if (current == "__metadata__")
            duplicate = fmt::format("__metadata__ has the key '{}' twice", key);
          else
            duplicate = fmt::format("tensor '{}': its entry has the key \"{}\" twice", current, key);
        }
        break;
      }
      case json::parse_event_t::array_start:
      case json::parse_event_t::array_end:
      case json::parse_event_t::value: break;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text.data(), text.data() + text.size(), callback);
  } catch (const json::exception& e) {
    // A syntax error (parse_error), or a number too large for a double (out_of_range 406). The
    // parser quotes the token it choked on, which in a hostile header can be megabytes.
    fail(source, "the header is not valid JSON: {}", truncated(e.what(), 300));
  }
  if (duplicate) fail(source, "{}", *duplicate);
  return header;
}

void read_metadata(const json& value, std::string_view source, SafetensorsMetadata& metadata) {
  if (value.is_null()) return;  // the reference reads `"__metadata__": null` as no metadata
  if (!value.is_object())
    fail(source, "__metadata__ is {}, not an object mapping strings to strings", json_kind(value));
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string())
      fail(source, "__metadata__ entry '{}' is {}, not a string", key, json_kind(v));
    metadata[key] = v.get<std::string>();
  }
}

/// The member `field` of tensor `name`'s entry; throws when it is missing.
const json& member(const json& entry, std::string_view field, std::string_view source,
                   std::string_view name) {
  const auto it = entry.find(field);
  if (it == entry.end())
    fail_tensor(source, name, "the entry has no \"{}\" (it needs dtype, shape and data_offsets)", field);
  return *it;
}

Entry read_entry(const std::string& name, const json& value, std::string_view source,
                 std::uint64_t data_size) {
  Entry e;
  e.name = name;
  if (name.empty()) fail(source, "a tensor has an empty name");
  if (!value.is_object())
    fail_tensor(source, name, "the entry is {}, not an object with dtype, shape and data_offsets",
                json_kind(value));

  const json& dtype = member(value, "dtype", source, name);
  if (!dtype.is_string()) fail_tensor(source, name, "\"dtype\" is {}, not a string", json_kind(dtype));
  e.dtype = find_file_dtype(dtype.get_ref<const std::string&>());
  if (!e.dtype) {
    std::vector<std::string_view> codes;
    for (const FileDType& d : kFileDTypes) codes.push_back(d.code);
    fail_tensor(source, name, "unsupported dtype {}; supported: {}", brief(dtype), fmt::join(codes, ", "));
  }

  const json& shape = member(value, "shape", source, name);
  if (!shape.is_array())
    fail_tensor(source, name, "\"shape\" is {}, not an array of sizes", json_kind(shape));
  if (shape.size() > kMaxTensorRank)
    fail_tensor(source, name, "rank {} is above the {} dims symtrace tensors support", shape.size(), kMaxTensorRank);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const auto size = as_unsigned(shape[i]);
    if (!size) fail_tensor(source, name, "shape dim {} is {}, not a non-negative integer", i, brief(shape[i]));
    if (*size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail_tensor(source, name, "shape dim {} is {}, larger than int64 can hold", i, *size);
    e.shape.push_back(static_cast<std::int64_t>(*size));
  }
  // The product of the non-zero dims bounds every stride as well as the element count, so a
  // size-0 dim does not excuse an overflow elsewhere.
  std::int64_t nonzero_product = 1;
  bool empty = false;
  for (const std::int64_t dim : e.shape) {
    if (dim == 0) empty = true;
    else if (__builtin_mul_overflow(nonzero_product, dim, &nonzero_product))
      fail_tensor(source, name, "shape [{}] has more elements than int64 can count", dims_text(e.shape));
  }
  const std::uint64_t numel = empty ? 0 : static_cast<std::uint64_t>(nonzero_product);

  const json& offsets = member(value, "data_offsets", source, name);
  const auto begin = offsets.is_array() && offsets.size() == 2 ? as_unsigned(offsets[0]) : std::nullopt;
  const auto end = offsets.is_array() && offsets.size() == 2 ? as_unsigned(offsets[1]) : std::nullopt;
  if (!begin || !end)
    fail_tensor(source, name, "\"data_offsets\" is {}, not [begin, end] with two non-negative integers",
                brief(offsets));
  e.begin = *begin;
  e.end = *end;
  if (e.end < e.begin)
    fail_tensor(source, name, "data_offsets [{}, {}] end before they begin", e.begin, e.end);
  if (e.end > data_size)
    fail_tensor(source, name, "data_offsets [{}, {}] reach past the end of the data, which holds {} bytes",
                e.begin, e.end, data_size);
  std::uint64_t needed = 0;
  const bool overflow = __builtin_mul_overflow(numel, e.dtype->size, &needed);
  if (overflow || needed != e.end - e.begin)
    fail_tensor(source, name, "data_offsets [{}, {}] hold {} bytes but {} needs {}", e.begin, e.end,
                e.end - e.begin, describe(*e.dtype, e.shape),
                overflow ? std::string("more than 2^64") : fmt::format("{}", needed));
  return e;
}

/// Checks that the entries tile [0, data_size) exactly, as the reference does: sorted by
/// offset, each begins where the previous ends and the last ends at the end of the data.
void check_coverage(const std::vector<Entry>& entries, std::string_view source, std::uint64_t data_size) {
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  std::uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : sorted) {
    if (e->begin < covered)
      fail_tensor(source, e->name, "data_offsets [{}, {}] overlap tensor '{}' at [{}, {}]", e->begin,
                  e->end, previous->name, previous->begin, previous->end);
    if (e->begin > covered)
      fail_tensor(source, e->name, "data_offsets [{}, {}] leave a hole: bytes [{}, {}) of the data "
                                   "belong to no tensor",
                  e->begin, e->end, covered, e->begin);
    covered = e->end;
    previous = e;
  }
  if (covered != data_size)
    fail(source, "the data holds {} bytes but the tensors cover only the first {}; the rest "
                 "belongs to no tensor",
         data_size, covered);
}

/// Half precision bits to float (exact: every half is a float).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f)  // infinity or NaN (the payload kept)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// Element `i` of `src` as the little-endian type S.
template <class S>
S load(const std::byte* src, std::size_t i) {
  S value;
  std::memcpy(&value, src + i * sizeof(S), sizeof(S));
  return value;
}

template <class D, class F>
void convert(std::byte* dst, std::size_t n, F&& element) {
  for (std::size_t i = 0; i < n; ++i) {
    const D value = element(i);
    std::memcpy(dst + i * sizeof(D), &value, sizeof(D));
  }
}

Tensor read_tensor(const Entry& e, const std::byte* data, std::string_view source) {
  Tensor t = Tensor::empty(Shape(e.shape), e.dtype->target);
  const std::byte* src = data + e.begin;
  std::byte* dst = t.impl().storage->data;
  const std::size_t n = static_cast<std::size_t>(e.end - e.begin) / e.dtype->size;
  const std::string_view code = e.dtype->code;
  if (code == "F32" || code == "I64") {
    std::memcpy(dst, src, n * e.dtype->size);
  } else if (code == "BOOL") {
    for (std::size_t i = 0; i < n; ++i) {
      const auto byte = std::to_integer<unsigned>(src[i]);
      if (byte > 1)
        fail_tensor(source, e.name, "element {} of the bool data is the byte {}, not 0 or 1", i, byte);
    }
    std::memcpy(dst, src, n);
  } else if (code == "F64") {
    convert<float>(dst, n, [&](std::size_t i) { return static_cast<float>(load<double>(src, i)); });
  } else if (code == "F16") {
    convert<float>(dst, n, [&](std::size_t i) { return half_to_float(load<std::uint16_t>(src, i)); });
  } else if (code == "BF16") {
    convert<float>(dst, n, [&](std::size_t i) {
      return std::bit_cast<float>(static_cast<std::uint32_t>(load<std::uint16_t>(src, i)) << 16);
    });
  } else if (code == "I32") {
    convert<std::int64_t>(dst, n, [&](std::size_t i) { return std::int64_t{load<std::int32_t>(src, i)}; });
  } else if (code == "I16") {
    convert<std::int64_t>(dst, n, [&](std::size_t i) { return std::int64_t{load<std::int16_t>(src, i)}; });
  } else if (code == "I8") {
    convert<std::int64_t>(dst, n, [&](std::size_t i) { return std::int64_t{load<std::int8_t>(src, i)}; });
  } else {
    SYMTRACE_ASSERT(code == "U8", "safetensors: a dtype in the table has no conversion");
    convert<std::int64_t>(dst, n, [&](std::size_t i) { return std::int64_t{load<std::uint8_t>(src, i)}; });
  }
  return t;
}

StateDict deserialize(std::span<const std::byte> bytes, std::string_view source,
                      SafetensorsMetadata* metadata) {
  if (bytes.size() < 8)
    fail(source, "truncated file: {} bytes, shorter than the 8-byte header length that starts a "
                 "safetensors file",
         bytes.size());
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  if (header_size > kMaxHeaderBytes)
    fail(source, "the header length says {} bytes, more than the {} bytes safetensors allows; "
                 "this is not a safetensors file or it is corrupt",
         header_size, kMaxHeaderBytes);
  if (header_size > bytes.size() - 8)
    fail(source, "truncated file: the header length says {} bytes but only {} follow", header_size,
         bytes.size() - 8);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), header_size);
  const std::span<const std::byte> data = bytes.subspan(8 + header_size);

  std::vector<std::string> order;
  const json header = parse_header(text, source, order);
  if (!header.is_object())
    fail(source, "the header is {}, not an object mapping tensor names to entries", json_kind(header));

  std::vector<Entry> entries;
  entries.reserve(order.size());
  SafetensorsMetadata file_metadata;
  for (const std::string& key : order) {
    const json& value = header.at(key);
    if (key == "__metadata__") read_metadata(value, source, file_metadata);
    else entries.push_back(read_entry(key, value, source, data.size()));
  }
  check_coverage(entries, source, data.size());

  StateDict state;
  for (const Entry& e : entries) state.insert(e.name, read_tensor(e, data.data(), source));
  if (metadata) *metadata = std::move(file_metadata);
  return state;
}

}  // namespace

// ---- Public API -------------------------------------------------------------------------------

std::vector<std::byte> serialize_safetensors(const StateDict& state, const SafetensorsMetadata& metadata) {
  return serialize(state, metadata, "<memory>");
}

StateDict deserialize_safetensors(std::span<const std::byte> bytes, std::string_view source,
                                  SafetensorsMetadata* metadata) {
  return deserialize(bytes, source, metadata);
}

void save_safetensors(const StateDict& state, const std::filesystem::path& path,
                      const SafetensorsMetadata& metadata) {
  const std::vector<std::byte> bytes = serialize(state, metadata, path.string());
  // Written beside the target and renamed over it, so a failed write never destroys the old file.
  std::filesystem::path temp = path;
  temp += ".partial";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      const int error = errno;
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(error)));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw Error(fmt::format("cannot write '{}': {}", path.string(), ec.message()));
  }
}

StateDict load_safetensors(const std::filesystem::path& path, SafetensorsMetadata* metadata) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("cannot read '{}': it is a directory", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
  std::vector<std::byte> bytes;
  std::array<char, 1 << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    const auto* first = reinterpret_cast<const std::byte*>(chunk.data());
    bytes.insert(bytes.end(), first, first + in.gcount());
  }
  if (in.bad()) throw Error(fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
  return deserialize_safetensors(bytes, path.string(), metadata);
}

void save_safetensors(const Module& module, const std::filesystem::path& path,
                      const SafetensorsMetadata& metadata) {
  save_safetensors(module.state_dict(), path, metadata);
}

LoadStateDictResult load_safetensors(Module& module, const std::filesystem::path& path, bool strict,
                                     std::source_location where) {
  return module.load_state_dict(load_safetensors(path), strict, where);
}

}  // namespace symtrace
