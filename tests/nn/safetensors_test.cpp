#include "support/checks.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace symtrace;
using symtrace::testing::iota;
using symtrace::testing::transposed;

namespace {

/// A file path under the temp directory, unique to this process and test, removed at the end.
struct TempFile {
  TempFile() {
    std::random_device entropy;
    path = std::filesystem::temp_directory_path() /
           fmt::format("symtrace_safetensors_test_{:016x}.safetensors",
                       (std::uint64_t{entropy()} << 32) | entropy());
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::filesystem::path path;
};

/// Every element's bits (float32 as its 32-bit pattern, int64 and bool as integers), so NaN,
/// -0.0 and infinities compare exactly.
std::vector<std::uint64_t> bits(const Tensor& t) {
  std::vector<std::uint64_t> out;
  switch (t.dtype()) {
    case DType::float32:
      for (float v : t.to_vector<float>()) out.push_back(std::bit_cast<std::uint32_t>(v));
      break;
    case DType::int64:
      for (std::int64_t v : t.to_vector<std::int64_t>()) out.push_back(static_cast<std::uint64_t>(v));
      break;
    case DType::bool_:
      for (bool v : t.to_vector<bool>()) out.push_back(v ? 1 : 0);
      break;
    default: FAIL("a state of a dtype save refuses: ", t.dtype());
  }
  return out;
}

/// Checks that `actual` holds the same names, in the same order, with bit-identical tensors.
void check_same_state(const StateDict& actual, const StateDict& expected) {
  REQUIRE(actual.keys() == expected.keys());
  for (const auto& [key, want] : expected) {
    CAPTURE(key);
    const Tensor& got = actual.at(key);
    CHECK(got.dtype() == want.dtype());
    CHECK(got.shape() == want.shape());
    CHECK(got.is_contiguous());
    CHECK(bits(got) == bits(want));
  }
}

/// A state with every dtype the writer stores, 0-dim and size-0 tensors, special float values,
/// int64 extremes and a transposed (non-contiguous) view.
StateDict mixed_state() {
  StateDict state;
  state.insert("floats", tensor({0.5f, -0.0f, std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(),
                                 std::numeric_limits<float>::denorm_min(), 3.25f},
                                {2, 3}));
  state.insert("ints", tensor({std::numeric_limits<std::int64_t>::min(), std::int64_t{-1},
                               std::int64_t{0}, std::numeric_limits<std::int64_t>::max()},
                              {4}));
  state.insert("mask", tensor({true, false, false, true, true, false}, {3, 1, 2}));
  state.insert("scalar", scalar_tensor(-7.5f));
  state.insert("step", scalar_tensor(std::int64_t{42}));
  state.insert("flag", scalar_tensor(true));
  state.insert("empty", zeros({0, 3}));
  state.insert("empty_ints", zeros({2, 0}, DType::int64));
  state.insert("transposed", transposed(iota({2, 3})));
  return state;
}

/// The bytes of a safetensors file with `header` (not padded) and `data`.
std::vector<std::byte> make_file(std::string_view header, const std::vector<std::byte>& data = {}) {
  std::vector<std::byte> out(8);
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// Appends the little-endian bytes of `values` to `out`.
template <class T>
void put(std::vector<std::byte>& out, std::initializer_list<T> values) {
  for (T v : values) {
    std::byte b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
  }
}

std::vector<std::byte> zero_bytes(std::size_t n) { return std::vector<std::byte>(n); }

/// `deserialize_safetensors` of a hand-built file.
StateDict read(std::string_view header, const std::vector<std::byte>& data = {},
               SafetensorsMetadata* metadata = nullptr) {
  return deserialize_safetensors(make_file(header, data), "model.safetensors", metadata);
}

// ---- A small model: a parameter, a 0-dim int64 buffer and a child with its own parameter.

struct ChildImpl : TypedModule<ChildImpl> {
  explicit ChildImpl(Generator& gen) { bias = register_parameter("bias", randn({2}, gen)); }
  Tensor forward(const Tensor& x) { return x + bias; }
  Tensor bias;
};

struct NetImpl : TypedModule<NetImpl> {
  explicit NetImpl(std::uint64_t seed) {
    Generator gen(seed);
    weight = register_parameter("weight", randn({3, 2}, gen));
    steps = register_buffer("steps", scalar_tensor(static_cast<std::int64_t>(seed)));
    child = register_module("child", std::make_shared<ChildImpl>(gen));
  }
  Tensor forward(const Tensor& x) { return (*child)(x.matmul(weight)); }
  Tensor weight;
  Tensor steps;
  std::shared_ptr<ChildImpl> child;
};

}  // namespace

// ---- Round trips ------------------------------------------------------------------------------

TEST_CASE("float32, int64 and bool tensors of every shape round-trip in memory bit for bit") {
  const StateDict state = mixed_state();
  const StateDict back = deserialize_safetensors(serialize_safetensors(state));
  check_same_state(back, state);
  CHECK(back.at("transposed").to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("a state dict saved to a file loads back bit for bit with its metadata") {
  const TempFile file;
  const StateDict state = mixed_state();
  const SafetensorsMetadata metadata{{"format", "pt"}, {"note", "ünïcode, \"quotes\" and {braces}"}};
  save_safetensors(state, file.path, metadata);
  SafetensorsMetadata read_back{{"stale", "entry"}};
  check_same_state(load_safetensors(file.path, &read_back), state);
  CHECK(read_back == metadata);
  CHECK(std::filesystem::file_size(file.path) == serialize_safetensors(state, metadata).size());
}

TEST_CASE("metadata round-trips in memory and an empty map writes no __metadata__ entry") {
  StateDict state;
  state.insert("w", ones({2}));
  SUBCASE("with metadata") {
    const SafetensorsMetadata metadata{{"a", "1"}, {"b", ""}};
    SafetensorsMetadata back;
    check_same_state(deserialize_safetensors(serialize_safetensors(state, metadata), "<memory>", &back), state);
    CHECK(back == metadata);
  }
  SUBCASE("without metadata") {
    const auto bytes = serialize_safetensors(state);
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    const std::string header(reinterpret_cast<const char*>(bytes.data() + 8), n);
    CHECK(header.find("__metadata__") == std::string::npos);
    SafetensorsMetadata back{{"stale", "entry"}};
    (void)deserialize_safetensors(bytes, "<memory>", &back);
    CHECK(back.empty());
  }
}

TEST_CASE("the bytes of a tiny file are pinned: header length, header JSON, alignment and data") {
  StateDict state;
  state.insert("w", tensor({1.f, 2.f}, {2}));
  state.insert("n", scalar_tensor(std::int64_t{7}));
  state.insert("b", tensor({true, false}, {1, 2}));
  const auto bytes = serialize_safetensors(state, {{"format", "pt"}});

  REQUIRE(bytes.size() >= 8);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  REQUIRE(8 + n <= bytes.size());
  CHECK((8 + n) % 8 == 0);
  const std::string header(reinterpret_cast<const char*>(bytes.data() + 8), n);
  const auto json_end = header.find_last_of('}');
  REQUIRE(json_end != std::string::npos);
  CHECK(header.find_first_not_of(' ', json_end + 1) == std::string::npos);  // padded with spaces
  CHECK(n - (json_end + 1) < 8);
  // Tensors in state order, after the metadata, as the reference writes it.
  const auto expected = nlohmann::ordered_json::parse(R"({
    "__metadata__": {"format": "pt"},
    "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
    "n": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]},
    "b": {"dtype": "BOOL", "shape": [1, 2], "data_offsets": [16, 18]}
  })");
  CHECK(nlohmann::ordered_json::parse(header) == expected);

  std::vector<std::byte> data(bytes.begin() + static_cast<std::ptrdiff_t>(8 + n), bytes.end());
  std::vector<std::byte> want;
  put<std::uint8_t>(want, {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40});  // 1.0f, 2.0f
  put<std::uint8_t>(want, {7, 0, 0, 0, 0, 0, 0, 0});                          // int64 7
  put<std::uint8_t>(want, {1, 0});                                            // true, false
  CHECK(data == want);
}

TEST_CASE("F16, BF16, F64, I32, I16, I8 and U8 data is converted to float32 and int64") {
  std::vector<std::byte> data;
  // F16: 1, -2, 65504 (max), 2^-24 (smallest subnormal), -0, inf.
  put<std::uint16_t>(data, {0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7c00});  // [0, 12)
  put<std::uint16_t>(data, {0x3f80, 0xbf00, 0x4049, 0xff80});                  // BF16 [12, 20)
  put<double>(data, {0.1, -2.5});                                              // F64 [20, 36)
  put<std::int32_t>(data, {-5, std::numeric_limits<std::int32_t>::max()});     // I32 [36, 44)
  put<std::int16_t>(data, {-32768, 12});                                       // I16 [44, 48)
  put<std::int8_t>(data, {-128, 127});                                         // I8 [48, 50)
  put<std::uint8_t>(data, {0, 255, 128});                                      // U8 [50, 53)
  const StateDict state = read(R"({
    "half": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 12]},
    "brain": {"dtype": "BF16", "shape": [4], "data_offsets": [12, 20]},
    "double": {"dtype": "F64", "shape": [2], "data_offsets": [20, 36]},
    "i32": {"dtype": "I32", "shape": [2], "data_offsets": [36, 44]},
    "i16": {"dtype": "I16", "shape": [2], "data_offsets": [44, 48]},
    "i8": {"dtype": "I8", "shape": [2], "data_offsets": [48, 50]},
    "u8": {"dtype": "U8", "shape": [3], "data_offsets": [50, 53]}
  })",
                               data);
  CHECK(state.keys() == std::vector<std::string>{"half", "brain", "double", "i32", "i16", "i8", "u8"});
  const float inf = std::numeric_limits<float>::infinity();
  const auto half = state.at("half");
  CHECK(half.dtype() == DType::float32);
  CHECK(half.shape() == Shape{2, 3});
  CHECK(half.to_vector<float>() == std::vector<float>{1.f, -2.f, 65504.f, 0x1p-24f, -0.f, inf});
  CHECK(std::signbit(half.to_vector<float>()[4]));
  CHECK(state.at("brain").to_vector<float>() == std::vector<float>{1.f, -0.5f, 3.140625f, -inf});
  CHECK(state.at("double").to_vector<float>() == std::vector<float>{0.1f, -2.5f});
  CHECK(state.at("i32").dtype() == DType::int64);
  CHECK(state.at("i32").to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{-5, std::numeric_limits<std::int32_t>::max()});
  CHECK(state.at("i16").to_vector<std::int64_t>() == std::vector<std::int64_t>{-32768, 12});
  CHECK(state.at("i8").to_vector<std::int64_t>() == std::vector<std::int64_t>{-128, 127});
  CHECK(state.at("u8").to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 255, 128});
}

TEST_CASE("F16 NaN stays NaN when converted") {
  std::vector<std::byte> data;
  put<std::uint16_t>(data, {0x7e00, 0xfe01});
  const auto values = read(R"({"x": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", data)
                          .at("x")
                          .to_vector<float>();
  CHECK(std::isnan(values[0]));
  CHECK(std::isnan(values[1]));
}

// ---- The writer's refusals ----------------------------------------------------------------------

TEST_CASE("the writer refuses symbolic tensors and empty or reserved names") {
  StateDict state;
  SUBCASE("a symbolic tensor") {
    state.insert("x", Tensor::symbolic(TensorMeta{DType::float32, Shape{2}}, SymbolicRef{1, 3}));
    CHECK_THROWS_WITH_AS((void)serialize_safetensors(state),
                         "<memory>: cannot save tensor 'x': it is symbolic (it names a node of a trace and "
                         "holds no data); save the model's state outside tracing",
                         std::invalid_argument);
  }
  SUBCASE("an empty name") {
    state.insert("", ones({1}));
    CHECK_THROWS_WITH_AS((void)serialize_safetensors(state), "<memory>: cannot save a tensor with an empty name",
                         std::invalid_argument);
  }
  SUBCASE("the reserved name __metadata__") {
    state.insert("__metadata__", ones({1}));
    CHECK_THROWS_WITH_AS((void)serialize_safetensors(state),
                         doctest::Contains("cannot save a tensor named '__metadata__'"), std::invalid_argument);
  }
  SUBCASE("a name that is not UTF-8") {
    state.insert("bad\xff", ones({1}));
    CHECK_THROWS_WITH_AS((void)serialize_safetensors(state), doctest::Contains("is not valid UTF-8"),
                         std::invalid_argument);
  }
}

TEST_CASE("save_safetensors names the file when it refuses a tensor and when it cannot write") {
  const TempFile file;
  StateDict state;
  state.insert("x", Tensor::symbolic(TensorMeta{DType::float32, Shape{2}}, SymbolicRef{1, 3}));
  CHECK_THROWS_WITH_AS(save_safetensors(state, file.path),
                       doctest::Contains(fmt::format("{}: cannot save tensor 'x'", file.path.string()).c_str()),
                       std::invalid_argument);
  CHECK_FALSE(std::filesystem::exists(file.path));

  const auto missing_dir = file.path / "sub" / "model.safetensors";
  CHECK_THROWS_WITH_AS(save_safetensors(StateDict{}, missing_dir),
                       fmt::format("cannot write '{}': No such file or directory", missing_dir.string()).c_str(),
                       Error);
}

TEST_CASE("load_safetensors throws symtrace::Error when the file cannot be read") {
  const TempFile file;
  CHECK_THROWS_WITH_AS((void)load_safetensors(file.path),
                       fmt::format("cannot read '{}': No such file or directory", file.path.string()).c_str(),
                       Error);
  const auto dir = std::filesystem::temp_directory_path();
  CHECK_THROWS_WITH_AS((void)load_safetensors(dir),
                       fmt::format("cannot read '{}': it is a directory", dir.string()).c_str(), Error);
}

// ---- Hostile input: one test per malformation ---------------------------------------------------

TEST_CASE("a file shorter than the 8-byte header length is refused") {
  CHECK_THROWS_WITH_AS((void)deserialize_safetensors(zero_bytes(5), "model.safetensors"),
                       "model.safetensors: truncated file: 5 bytes, shorter than the 8-byte header length "
                       "that starts a safetensors file",
                       std::invalid_argument);
}

TEST_CASE("a header length larger than the rest of the file is refused") {
  auto bytes = make_file("{}", zero_bytes(10));
  const std::uint64_t n = 1000;
  std::memcpy(bytes.data(), &n, 8);
  CHECK_THROWS_WITH_AS((void)deserialize_safetensors(bytes, "model.safetensors"),
                       "model.safetensors: truncated file: the header length says 1000 bytes but only 12 follow",
                       std::invalid_argument);
}

TEST_CASE("a header length above the 100 MB limit is refused before anything is read") {
  auto bytes = make_file("{}");
  const std::uint64_t n = 100'000'001;
  std::memcpy(bytes.data(), &n, 8);
  CHECK_THROWS_WITH_AS((void)deserialize_safetensors(bytes, "model.safetensors"),
                       doctest::Contains("model.safetensors: the header length says 100000001 bytes, more than "
                                         "the 100000000 bytes safetensors allows"),
                       std::invalid_argument);
  const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max();
  std::memcpy(bytes.data(), &huge, 8);
  CHECK_THROWS_WITH_AS((void)deserialize_safetensors(bytes, "model.safetensors"),
                       doctest::Contains("the header length says 18446744073709551615 bytes"), std::invalid_argument);
}

TEST_CASE("a header that is not JSON is refused with the parser's position") {
  CHECK_THROWS_WITH_AS((void)read(R"({"x": {"dtype": "F32",)"),
                       doctest::Contains("model.safetensors: the header is not valid JSON: "), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(""), doctest::Contains("model.safetensors: the header is not valid JSON: "),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read("{\"x\xff\": 1}"), doctest::Contains("the header is not valid JSON: "),
                       std::invalid_argument);
  // A number no double holds: nlohmann's out_of_range, not a parse_error, until it was caught too.
  CHECK_THROWS_WITH_AS((void)read(R"({"__metadata__": 555555555555E5555})"),
                       "model.safetensors: the header is not valid JSON: [json.exception.out_of_range.406] number "
                       "overflow parsing '555555555555E5555'",
                       std::invalid_argument);
}

TEST_CASE("a header that is not a JSON object is refused") {
  CHECK_THROWS_WITH_AS((void)read("[1, 2]"),
                       "model.safetensors: the header is an array, not an object mapping tensor names to entries",
                       std::invalid_argument);
}

TEST_CASE("a tensor entry that is not an object is refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({"fc.weight": [0, 4]})"),
                       "model.safetensors: tensor 'fc.weight': the entry is an array, not an object with "
                       "dtype, shape and data_offsets",
                       std::invalid_argument);
}

TEST_CASE("a tensor entry missing dtype, shape or data_offsets is refused") {
  const auto data = zero_bytes(4);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", data),
                       "model.safetensors: tensor 'w': the entry has no \"dtype\" (it needs dtype, shape and "
                       "data_offsets)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", data),
                       doctest::Contains("tensor 'w': the entry has no \"shape\""), std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [1]}})", data),
                       doctest::Contains("tensor 'w': the entry has no \"data_offsets\""), std::invalid_argument);
}

TEST_CASE("a dtype, shape or data_offsets of the wrong JSON type is refused") {
  const auto data = zero_bytes(4);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": 4, "shape": [1], "data_offsets": [0, 4]}})", data),
                       "model.safetensors: tensor 'w': \"dtype\" is an integer, not a string",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", data),
                       "model.safetensors: tensor 'w': \"shape\" is an integer, not an array of sizes",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": {"begin": 0}}})", data),
                       "model.safetensors: tensor 'w': \"data_offsets\" is {\"begin\":0}, not [begin, end] with "
                       "two non-negative integers",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", data),
                       doctest::Contains("tensor 'w': \"data_offsets\" is [0,4,8], not [begin, end]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 4]}})", data),
                       doctest::Contains("tensor 'w': \"data_offsets\" is [-4,4], not [begin, end]"),
                       std::invalid_argument);
}

TEST_CASE("an unknown dtype is refused with the list of supported ones") {
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "U64", "shape": [1], "data_offsets": [0, 8]}})",
                                  zero_bytes(8)),
                       "model.safetensors: tensor 'w': unsupported dtype \"U64\"; supported: F32, I64, BOOL, "
                       "F64, F16, BF16, I32, I16, I8, U8",
                       std::invalid_argument);
}

TEST_CASE("a negative or non-integer shape dim is refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 0]}})"),
                       "model.safetensors: tensor 'w': shape dim 1 is -1, not a non-negative integer",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 0]}})"),
                       "model.safetensors: tensor 'w': shape dim 0 is 1.5, not a non-negative integer",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": ["2"], "data_offsets": [0, 0]}})"),
                       "model.safetensors: tensor 'w': shape dim 0 is \"2\", not a non-negative integer",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "F32", "shape": [9223372036854775808], "data_offsets": [0, 0]}})"),
                       "model.safetensors: tensor 'w': shape dim 0 is 9223372036854775808, larger than int64 can hold",
                       std::invalid_argument);
}

TEST_CASE("a shape whose element count overflows int64 is refused") {
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})"),
      "model.safetensors: tensor 'w': shape [4294967296, 4294967296] has more elements than int64 can count",
      std::invalid_argument);
  // A dim of 0 does not excuse the others: strides would still overflow.
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"w": {"dtype": "F32", "shape": [0, 4294967296, 4294967296], "data_offsets": [0, 0]}})"),
      doctest::Contains("has more elements than int64 can count"), std::invalid_argument);
  // The element count fits but its byte size does not fit 64 bits.
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"w": {"dtype": "I64", "shape": [4611686018427387904], "data_offsets": [0, 8]}})", zero_bytes(8)),
      doctest::Contains("data_offsets [0, 8] hold 8 bytes but int64[4611686018427387904] needs more than 2^64"),
      std::invalid_argument);
}

TEST_CASE("data_offsets that disagree with the shape's byte size are refused") {
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"fc.weight": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 24]}})", zero_bytes(24)),
      "model.safetensors: tensor 'fc.weight': data_offsets [0, 24] hold 24 bytes but float32[2, 4] needs 32",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"h": {"dtype": "F16", "shape": [], "data_offsets": [0, 4]}})", zero_bytes(4)),
      "model.safetensors: tensor 'h': data_offsets [0, 4] hold 4 bytes but float16[] needs 2",
      std::invalid_argument);
}

TEST_CASE("data_offsets outside the data or ending before they begin are refused") {
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", zero_bytes(8)),
      "model.safetensors: tensor 'w': data_offsets [0, 16] reach past the end of the data, which holds 8 bytes",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (void)read(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [18446744073709551615, 3]}})", zero_bytes(4)),
      "model.safetensors: tensor 'w': data_offsets [18446744073709551615, 3] end before they begin",
      std::invalid_argument);
}

TEST_CASE("overlapping tensors are refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({
      "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                                  zero_bytes(12)),
                       "model.safetensors: tensor 'b': data_offsets [4, 12] overlap tensor 'a' at [0, 8]",
                       std::invalid_argument);
  // An empty tensor inside another one is an overlap too, as in the reference.
  CHECK_THROWS_WITH_AS((void)read(R"({
      "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
      "z": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]}})",
                                  zero_bytes(8)),
                       "model.safetensors: tensor 'z': data_offsets [4, 4] overlap tensor 'a' at [0, 8]",
                       std::invalid_argument);
}

TEST_CASE("holes between tensors are refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({
      "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})",
                                  zero_bytes(24)),
                       "model.safetensors: tensor 'b': data_offsets [16, 24] leave a hole: bytes [8, 16) of the "
                       "data belong to no tensor",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", zero_bytes(8)),
                       doctest::Contains("tensor 'b': data_offsets [4, 8] leave a hole: bytes [0, 4)"),
                       std::invalid_argument);
}

TEST_CASE("data bytes after the last tensor are refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", zero_bytes(6)),
                       "model.safetensors: the data holds 6 bytes but the tensors cover only the first 4; the "
                       "rest belongs to no tensor",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read("{}", zero_bytes(1)),
                       doctest::Contains("the data holds 1 bytes but the tensors cover only the first 0"),
                       std::invalid_argument);
}

TEST_CASE("__metadata__ that is not a string-to-string object is refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({"__metadata__": ["pt"]})"),
                       "model.safetensors: __metadata__ is an array, not an object mapping strings to strings",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"__metadata__": {"format": "pt", "version": 2}})"),
                       "model.safetensors: __metadata__ entry 'version' is an integer, not a string",
                       std::invalid_argument);
  SafetensorsMetadata metadata{{"stale", "entry"}};
  CHECK(read(R"({"__metadata__": null})", {}, &metadata).empty());
  CHECK(metadata.empty());
}

TEST_CASE("duplicate JSON keys are refused instead of keeping the last one") {
  const auto data = zero_bytes(4);
  CHECK_THROWS_WITH_AS((void)read(R"({
      "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                                  data),
                       "model.safetensors: the header lists tensor 'w' twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"w": {"dtype": "I64", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                                  data),
                       "model.safetensors: tensor 'w': its entry has the key \"dtype\" twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)read(R"({"__metadata__": {"a": "1", "a": "2"}})"),
                       "model.safetensors: __metadata__ has the key 'a' twice", std::invalid_argument);
}

TEST_CASE("messages stay short for huge, long or deeply nested header values") {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK_THROWS_WITH_AS(
      (void)read(fmt::format(R"({{"w": {{"dtype": "F32", "shape": [{}], "data_offsets": [0, 0]}}}})", deep)),
      "model.safetensors: tensor 'w': shape dim 0 is an array, not a non-negative integer", std::invalid_argument);
  const std::string long_string = fmt::format("\"{}\"", std::string(1000, 'x'));
  CHECK_THROWS_WITH_AS(
      (void)read(fmt::format(R"({{"w": {{"dtype": "F32", "shape": [{}], "data_offsets": [0, 0]}}}})", long_string)),
      fmt::format("model.safetensors: tensor 'w': shape dim 0 is \"{}..., not a non-negative integer",
                  std::string(59, 'x'))
          .c_str(),
      std::invalid_argument);
  std::string many_ones = "1";
  for (int i = 0; i < 999; ++i) many_ones += ", 1";
  CHECK_THROWS_WITH_AS(
      (void)read(fmt::format(R"({{"w": {{"dtype": "F32", "shape": [{}], "data_offsets": [0, 8]}}}})", many_ones),
                 zero_bytes(8)),
      "model.safetensors: tensor 'w': rank 1000 is above the 15 dims symtrace tensors support",
      std::invalid_argument);
  const std::string unterminated = "{\"" + std::string(1'000'000, 'a');
  try {
    (void)read(unterminated);
    FAIL("an unterminated header was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string_view(e.what()).starts_with("model.safetensors: the header is not valid JSON: "));
    CHECK(std::string_view(e.what()).size() < 400);
  }
  CHECK_THROWS_WITH_AS((void)read(deep), "model.safetensors: the header is an array, not an object mapping tensor "
                                         "names to entries",
                       std::invalid_argument);
}

TEST_CASE("bool data with bytes other than 0 and 1 is refused") {
  std::vector<std::byte> data;
  put<std::uint8_t>(data, {1, 0, 2});
  CHECK_THROWS_WITH_AS((void)read(R"({"mask": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}})", data),
                       "model.safetensors: tensor 'mask': element 2 of the bool data is the byte 2, not 0 or 1",
                       std::invalid_argument);
}

TEST_CASE("a tensor with an empty name is refused") {
  CHECK_THROWS_WITH_AS((void)read(R"({"": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}})"),
                       "model.safetensors: a tensor has an empty name", std::invalid_argument);
}

TEST_CASE("errors from load_safetensors start with the file's path") {
  const TempFile file;
  {
    std::ofstream out(file.path, std::ios::binary);
    out << "tiny";
  }
  CHECK_THROWS_WITH_AS((void)load_safetensors(file.path),
                       fmt::format("{}: truncated file: 4 bytes, shorter than the 8-byte header length that "
                                   "starts a safetensors file",
                                   file.path.string())
                           .c_str(),
                       std::invalid_argument);
}

TEST_CASE("every truncation of a valid file fails cleanly with std::invalid_argument") {
  const auto bytes = serialize_safetensors(mixed_state(), {{"format", "pt"}});
  REQUIRE_NOTHROW((void)deserialize_safetensors(bytes));
  int failures = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    try {
      (void)deserialize_safetensors(std::span(bytes).first(n), "cut.safetensors");
      FAIL_CHECK(fmt::format("a prefix of {} of {} bytes was accepted", n, bytes.size()));
    } catch (const std::invalid_argument& e) {
      if (std::string_view(e.what()).starts_with("cut.safetensors: ")) ++failures;
      else FAIL_CHECK(e.what());
    }
  }
  CHECK(failures == static_cast<int>(bytes.size()));
}

// ---- Modules ------------------------------------------------------------------------------------

TEST_CASE("a module saved to a file loads into a fresh instance bit for bit") {
  const TempFile file;
  const auto saved = std::make_shared<NetImpl>(1);
  const auto fresh = std::make_shared<NetImpl>(2);
  REQUIRE(bits(saved->weight) != bits(fresh->weight));
  save_safetensors(*saved, file.path);
  const LoadStateDictResult result = load_safetensors(*fresh, file.path);
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  check_same_state(fresh->state_dict(), saved->state_dict());
  CHECK(fresh->state_dict().keys() == std::vector<std::string>{"weight", "steps", "child.bias"});
  CHECK(fresh->steps.item<std::int64_t>() == 1);
}

TEST_CASE("loading a file with a missing or extra key fails when strict and works when not") {
  const TempFile file;
  const auto source = std::make_shared<NetImpl>(1);
  const auto target = std::make_shared<NetImpl>(2);
  const StateDict full = source->state_dict();
  StateDict state;
  SUBCASE("a missing key") {
    state.insert("weight", full.at("weight"));
    state.insert("steps", full.at("steps"));
    save_safetensors(state, file.path);
    const std::vector<std::uint64_t> bias_before = bits(target->child->bias);
    CHECK_THROWS_WITH_AS((void)load_safetensors(*target, file.path),
                         doctest::Contains("load_state_dict() into Net: 1 problem, the model was not changed:\n"
                                           "  missing key 'child.bias'"),
                         std::invalid_argument);
    CHECK(bits(target->weight) != bits(source->weight));
    const LoadStateDictResult result = load_safetensors(*target, file.path, /*strict=*/false);
    CHECK(result.missing_keys == std::vector<std::string>{"child.bias"});
    CHECK(result.unexpected_keys.empty());
    CHECK(bits(target->weight) == bits(source->weight));
    CHECK(bits(target->child->bias) == bias_before);
  }
  SUBCASE("an extra key") {
    for (const auto& [key, t] : full) state.insert(key, t);
    state.insert("extra", ones({1}));
    save_safetensors(state, file.path);
    CHECK_THROWS_WITH_AS((void)load_safetensors(*target, file.path),
                         doctest::Contains("unexpected key 'extra'"), std::invalid_argument);
    const LoadStateDictResult result = load_safetensors(*target, file.path, /*strict=*/false);
    CHECK(result.missing_keys.empty());
    CHECK(result.unexpected_keys == std::vector<std::string>{"extra"});
    check_same_state(target->state_dict(), full);
  }
}
