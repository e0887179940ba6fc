// libFuzzer target: deserialize_safetensors on any bytes, the reader of files users download.
// The bytes are either refused with std::invalid_argument or read into a state dict whose
// tensors are defined, concrete, contiguous and of the dtypes the reader makes, with metadata
// the writer accepts; writing what was read and reading it back gives the same bytes again.
// Anything else (a crash, a sanitizer report, another exception, a state that cannot be
// written back or changes on the round trip) is a finding.
//
//   tools/fuzz [SECONDS]
#include <symtrace/symtrace.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  symtrace::SafetensorsMetadata metadata;
  symtrace::StateDict state;
  try {
    state = symtrace::deserialize_safetensors(bytes, "fuzz.safetensors", &metadata);
  } catch (const std::invalid_argument&) {
    return 0;  // refused, as it should be
  }
  for (const auto& [name, tensor] : state) {
    if (name.empty() || !tensor.defined() || tensor.is_symbolic() || !tensor.is_contiguous()) std::abort();
  }
  // What was read is written back (any exception escaping here is a finding) and reads back
  // to the same bytes: the same names, order, dtypes, shapes, data and metadata.
  const std::vector<std::byte> written = symtrace::serialize_safetensors(state, metadata);
  symtrace::SafetensorsMetadata again_metadata;
  const symtrace::StateDict again = symtrace::deserialize_safetensors(written, "written", &again_metadata);
  if (again_metadata != metadata || symtrace::serialize_safetensors(again, again_metadata) != written) std::abort();
  return 0;
}
