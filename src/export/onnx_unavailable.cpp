// export_onnx in a build of symtrace configured without ONNX (libonnx-dev not found): the
// functions exist, so programs link either way, and say what to do.
#include "symtrace/export/onnx.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace symtrace {

bool onnx_export_available() noexcept { return false; }

std::string export_onnx(const Graph& /*graph*/, const Module& /*root*/, const OnnxOptions& /*options*/,
                        std::source_location where) {
  throw std::runtime_error(fmt::format(
      "{}:{}: export_onnx: this symtrace was built without ONNX support; install libonnx-dev and "
      "libprotobuf-dev (tools/install-deps does) and reconfigure the build with meson",
      where.file_name(), where.line()));
}

}  // namespace symtrace
