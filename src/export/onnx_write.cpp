// export_onnx to a stream or a file: the model is built whole first, so a failed export
// writes nothing.
#include "symtrace/export/onnx.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>
#include <stdexcept>

namespace symtrace {

void export_onnx(const Graph& graph, const Module& root, std::ostream& out, const OnnxOptions& options,
                 std::source_location where) {
  const std::string bytes = export_onnx(graph, root, options, where);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void export_onnx(const Graph& graph, const Module& root, const std::filesystem::path& path, const OnnxOptions& options,
                 std::source_location where) {
  const std::string bytes = export_onnx(graph, root, options, where);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (file) file.close();
  if (!file)
    throw std::runtime_error(fmt::format("{}:{}: export_onnx: cannot write '{}': {}", where.file_name(), where.line(),
                                         path.string(), std::strerror(errno)));
}

}  // namespace symtrace
